package io.github.ratelimit.gateway.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.chain.ClientChanges;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.LimiterChain;
import io.github.ratelimit.gateway.chain.LimiterChainBuilder;
import io.github.ratelimit.gateway.chain.LimiterChainCustomizer;
import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.client.ClientKeyResolver;
import io.github.ratelimit.gateway.client.DefaultClientKeyResolver;
import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.plan.PlanStore;
import io.github.ratelimit.gateway.plan.PrincipalPlanResolver;
import io.github.ratelimit.gateway.plan.StaticPlanResolver;
import io.github.ratelimit.gateway.properties.LimitReloader;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationCheck;
import io.github.ratelimit.gateway.properties.ProtectionRules;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.properties.RouteArgumentsValidator;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.InstanceCounter;
import io.github.ratelimit.gateway.redis.RedisClientChanges;
import io.github.ratelimit.gateway.redis.LettuceScriptExecutor;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.github.ratelimit.gateway.redis.RedisAccessProbe;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.RedisScriptExecutor;
import io.github.ratelimit.gateway.redis.ServerEventLoops;
import io.github.ratelimit.gateway.redis.SpringDataScriptExecutor;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import io.netty.channel.EventLoop;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Auto-configuration of the core of the limiter, shared by both front ends: the limits, client identification, the
 * limiter chain over the Redis store, and the request path of rate limited routes ({@link RateLimitHandler}, {@link RateLimitRoutes}). The
 * front ends are configured by {@link RateLimitWebFluxAutoConfiguration} (Gateway on WebFlux) and
 * {@code RateLimitServerMvcAutoConfiguration} (Gateway Server MVC), each only with its own server.
 *
 * <p>Active when reactive Spring Data Redis is on the class path (the starter brings it; it needs no web server) and
 * a {@link ReactiveRedisConnectionFactory} exists. Every bean can be replaced by declaring one of the same type; the
 * chain's layers are no beans: they are built by {@link LimiterChainBuilder} over the {@link RateLimitStore} bean and
 * changed through {@link LimiterChainCustomizer} beans. The starter defines none of Gateway's own {@code RateLimiter}/{@code KeyResolver} types, so it never clashes with
 * Gateway's {@code RequestRateLimiter} beans.
 *
 * <p>Off with {@code ratelimit.enabled=false}, like the starter's other auto-configurations; then
 * {@link RateLimitDisabledAutoConfiguration} registers {@code RateLimit} filters that let every request pass.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
		"org.springframework.cloud.gateway.config.GatewayAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(ReactiveStringRedisTemplate.class)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

	/**
	 * Name of the store's circuit breaker (standalone or Sentinel-managed Redis); on a Cluster each master has its
	 * own, {@code ratelimit-redis@host:port}.
	 */
	public static final String CIRCUIT_BREAKER_NAME = LimiterChainBuilder.CIRCUIT_BREAKER_NAME;

	/**
	 * Not replaceable: the configuration is checked whichever beans the application defines, the routes of each
	 * front end by its {@link RouteArgumentsValidator} (not replaceable either).
	 */
	@Bean
	RateLimitConfigurationCheck rateLimitConfigurationCheck(RateLimitProperties properties,
			ObjectProvider<RouteArgumentsValidator> routeValidators, Environment environment) {
		return new RateLimitConfigurationCheck(properties,
				RouteArgumentsValidator.allOf(routeValidators.orderedStream().toList()), environment);
	}

	@Bean
	@ConditionalOnMissingBean
	LimitResolver rateLimitLimitResolver(RateLimitProperties properties,
			RateLimitConfigurationCheck rateLimitConfigurationCheck) {
		return new LimitResolver(properties);
	}

	/**
	 * Takes re-bound {@code ratelimit.*} properties into use (Spring Cloud refresh); static: a bean post-processor.
	 */
	@Bean
	static LimitReloader rateLimitLimitReloader(ObjectProvider<LimitResolver> limitResolver,
			ObjectProvider<RouteArgumentsValidator> routeValidators) {
		return new LimitReloader(limitResolver,
				() -> RouteArgumentsValidator.allOf(routeValidators.orderedStream().toList()));
	}

	@Bean
	@ConditionalOnMissingBean
	PlanResolver rateLimitPlanResolver(RateLimitProperties properties) {
		return new StaticPlanResolver(properties.getApiKeys());
	}

	@Bean
	@ConditionalOnMissingBean
	ClientAddressResolver rateLimitClientAddressResolver(RateLimitProperties properties) {
		return new ClientAddressResolver(properties.getTrustedProxies());
	}

	/**
	 * The bodies of every refusal (429, 503, 400, 501), for both front ends: RFC 9457 problems. Replace it by
	 * declaring a {@link RateLimitProblems} bean (a subclass adding members, or localising {@code detail}).
	 */
	@Bean
	@ConditionalOnMissingBean
	RateLimitProblems rateLimitProblems() {
		return new RateLimitProblems();
	}

	/**
	 * Principals name no plan without Spring Security; with it, {@link RateLimitSecurityAutoConfiguration}'s
	 * resolver reads claims and authorities.
	 */
	@Bean
	@ConditionalOnMissingBean
	PrincipalPlanResolver rateLimitPrincipalPlanResolver() {
		return PrincipalPlanResolver.NAME_ONLY;
	}

	@Bean
	@ConditionalOnMissingBean
	ClientKeyResolver rateLimitClientKeyResolver(RateLimitProperties properties, LimitResolver limitResolver,
			PlanResolver planResolver, PrincipalPlanResolver principalPlanResolver,
			ClientAddressResolver addressResolver) {
		// the plan is decided here, once, against the limits in force
		return new DefaultClientKeyResolver(properties.getApiKeyHeader(), limitResolver, planResolver,
				principalPlanResolver, addressResolver);
	}

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitScript")
	RedisScript<List<Long>> rateLimitScript() {
		return RedisRateLimitStore.rateLimitScript();
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitStore.class)
	@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
	RedisRateLimitStore rateLimitStore(ReactiveRedisConnectionFactory connectionFactory,
			ObjectProvider<LimiterConnectionFactory> limiterConnectionFactory, RedisScript<List<Long>> rateLimitScript,
			RateLimitProperties properties, ObjectProvider<ServerEventLoops> serverEventLoops) {
		LimiterConnectionFactory limiter = limiterConnectionFactory.getIfAvailable();
		ReactiveRedisConnectionFactory redis = limiterRedis(limiterConnectionFactory, connectionFactory);
		RedisScriptExecutor executor = (redis instanceof LettuceConnectionFactory lettuce && limiter != null)
				? onEventLoops(lettuce, limiter, serverEventLoops.getIfAvailable()) : scriptExecutor(redis);
		return new RedisRateLimitStore(executor, rateLimitScript, new BucketKeys(properties.getKeyPrefix()));
	}

	/**
	 * The store's executor on the limiter's own client: a connection per server event loop (WebFlux), and one on an
	 * I/O loop of the client for the calls of every other thread (Server MVC's request threads), each batching the
	 * calls of a loop turn.
	 */
	private static LettuceScriptExecutor onEventLoops(LettuceConnectionFactory lettuce,
			LimiterConnectionFactory limiter, @Nullable ServerEventLoops server) {
		EventLoop forOtherThreads = limiter.clientEventLoop();
		return new LettuceScriptExecutor(lettuce, () -> {
			List<EventLoop> loops = new ArrayList<>((server != null) ? server.eventLoops() : List.of());
			if (forOtherThreads != null && !loops.contains(forOtherThreads)) {
				loops.add(forOtherThreads);
			}
			return limiter.onEventLoops(loops);
		}, forOtherThreads);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
	InstanceCounter rateLimitInstanceCounter(ReactiveRedisConnectionFactory connectionFactory,
			ObjectProvider<LimiterConnectionFactory> limiterConnectionFactory, RateLimitProperties properties) {
		RateLimitProperties.Fallback fallback = properties.getFallback();
		ReactiveRedisConnectionFactory redis = limiterRedis(limiterConnectionFactory, connectionFactory);
		// learning off, the executor is never called: Spring Data's, which opens no connection until it is
		RedisScriptExecutor executor = (fallback.isLearnInstances()) ? scriptExecutor(redis)
				: new SpringDataScriptExecutor(redis);
		return new InstanceCounter(executor, properties.getKeyPrefix(), fallback.getInstances(),
				fallback.isLearnInstances(), fallback.getHeartbeatInterval());
	}

	/**
	 * How an operator's reset or top-up through one instance reaches every instance's local state (remembered
	 * denials, leases, the local fallback's counts): a Redis pub/sub channel, {@code <key-prefix>:changes}, on the
	 * limiter's own client ({@link RedisClientChanges}); on a connection factory that is not Lettuce's, nothing is
	 * carried ({@link ClientChanges#NONE}).
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
	ClientChanges rateLimitClientChanges(ReactiveRedisConnectionFactory connectionFactory,
			ObjectProvider<LimiterConnectionFactory> limiterConnectionFactory, RateLimitProperties properties) {
		ReactiveRedisConnectionFactory redis = limiterRedis(limiterConnectionFactory, connectionFactory);
		return (redis instanceof LettuceConnectionFactory lettuce)
				? new RedisClientChanges(lettuce, properties.getKeyPrefix()) : ClientChanges.NONE;
	}

	/**
	 * How the limiter's Redis users run scripts: on a Lettuce factory, a Lettuce connection of their own
	 * (pre-encoded arguments, one future per call); on any other reactive factory, Spring Data Redis' reactive
	 * template.
	 * @param redis the limiter's connection factory
	 * @return a new executor
	 */
	private static RedisScriptExecutor scriptExecutor(ReactiveRedisConnectionFactory redis) {
		return (redis instanceof LettuceConnectionFactory lettuce) ? new LettuceScriptExecutor(lettuce)
				: new SpringDataScriptExecutor(redis);
	}

	/**
	 * The factory the limiter's Redis users go through: the limiter's own ({@link LimiterConnectionFactory}, from
	 * {@link RateLimitRedisConnectionAutoConfiguration}), else the application's.
	 * @param limiter the limiter's connection factory, if defined
	 * @param application the application's connection factory
	 * @return the factory to use
	 */
	static ReactiveRedisConnectionFactory limiterRedis(ObjectProvider<LimiterConnectionFactory> limiter,
			ReactiveRedisConnectionFactory application) {
		LimiterConnectionFactory own = limiter.getIfAvailable();
		return (own != null) ? own.getConnectionFactory() : application;
	}

	/**
	 * The limiter chain over the store ({@link LimiterChainBuilder}): the over-limit cache, the failure policy with
	 * one deadline per check and the local fallback, the scopes, the token leases (over a store that can lease), and
	 * one circuit breaker per shard of the store, set from {@code ratelimit.*}, listening to the
	 * {@link ClientChanges}, then changed by every {@link LimiterChainCustomizer}. When the application defines a {@code CircuitBreakerRegistry}, the breakers
	 * live there, and a breaker of that registry named {@value LimiterChainBuilder#CIRCUIT_BREAKER_NAME} (e.g.
	 * configured under {@code resilience4j.circuitbreaker.instances}) is the single shard's breaker and gives its
	 * settings to every shard's; otherwise {@code ratelimit.circuit-breaker.*} does.
	 */
	@Bean
	@ConditionalOnMissingBean(LimiterChain.class)
	@ConditionalOnBean(RateLimitStore.class)
	DefaultLimiterChain rateLimitLimiterChain(RateLimitStore store, RateLimitProperties properties,
			ObjectProvider<InstanceCounter> instanceCounter, ObjectProvider<CircuitBreakerRegistry> registry,
			ObjectProvider<RateLimitMetrics> metrics, ObjectProvider<LimiterChainCustomizer> customizers,
			ObjectProvider<ClientChanges> clientChanges) {
		RateLimitProperties.Fallback fallback = properties.getFallback();
		InstanceCounter counter = instanceCounter.getIfAvailable();
		int configured = fallback.getInstances();
		LimiterChainBuilder builder = LimiterChainBuilder.over(store)
			.timeout(properties.getRedisTimeout())
			.fallbackMode(fallback.getMode())
			.localFallback(fallback.getMaxBuckets(), (counter != null) ? counter::instances : () -> configured)
			.overLimitCache(properties.getOverLimitCache().isEnabled(), properties.getOverLimitCache().getMaxEntries())
			.leases(true, properties.getLeases().getDuration(), properties.getLeases().getMaxEntries())
			.listener(metrics.getIfAvailable(() -> RateLimitMetrics.NONE))
			.clientChanges(clientChanges.getIfAvailable(() -> ClientChanges.NONE));
		circuitBreakers(builder, properties.getCircuitBreaker(), registry.getIfAvailable());
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		return builder.build();
	}

	private static void circuitBreakers(LimiterChainBuilder builder, RateLimitProperties.CircuitBreaker settings,
			@Nullable CircuitBreakerRegistry applicationRegistry) {
		CircuitBreakerConfig config = CircuitBreakerConfig.custom()
			.failureRateThreshold(settings.getFailureRateThreshold())
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(settings.getSlidingWindowSize())
			.minimumNumberOfCalls(settings.getMinimumNumberOfCalls())
			.waitDurationInOpenState(settings.getWaitDurationInOpenState())
			.permittedNumberOfCallsInHalfOpenState(settings.getPermittedCallsInHalfOpenState())
			.automaticTransitionFromOpenToHalfOpenEnabled(false)
			// refused calls while open are answered by the fallback: no stack trace per refused check
			.writableStackTraceEnabled(false)
			.build();
		CircuitBreakerConfig shardConfig = (applicationRegistry != null) ? applicationRegistry
			.find(CIRCUIT_BREAKER_NAME)
			.map(CircuitBreaker::getCircuitBreakerConfig)
			.orElse(config) : config;
		builder.circuitBreakers(applicationRegistry, shardConfig);
	}

	/**
	 * The upstream protections ({@code ratelimit.protections}), built once, and the priority of each plan in force.
	 */
	@Bean
	@ConditionalOnMissingBean
	UpstreamProtections upstreamProtections(RateLimitProperties properties, LimitResolver limitResolver) {
		return ProtectionRules.protections(properties, limitResolver::effectiveProperties);
	}

	/** The rate limited routes' settings, resolved and checked against the limits in force. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LimiterChain.class)
	RateLimitRoutes rateLimitRoutes(LimitResolver limitResolver, UpstreamProtections protections) {
		return new RateLimitRoutes(limitResolver, protections);
	}

	/** The request path of rate limited routes, shared by the front ends, over the limiter chain. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LimiterChain.class)
	RateLimitHandler rateLimitHandler(RateLimitProperties properties, LimitResolver limitResolver,
			ClientKeyResolver clientKeyResolver, LimiterChain chain, ObjectProvider<RateLimitMetrics> metrics,
			UpstreamProtections protections) {
		return new RateLimitHandler(properties, limitResolver, clientKeyResolver, chain,
				metrics.getIfAvailable(() -> RateLimitMetrics.NONE), protections);
	}

	/**
	 * Tries the limiter's Redis calls once at start-up and logs one WARN naming the property to fix when Redis
	 * refuses the credentials or the ACL user lacks a permission (see {@link RedisAccessProbe}).
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisRateLimitStore.class)
	RedisAccessProbe rateLimitRedisAccessProbe(RedisRateLimitStore store, ObjectProvider<InstanceCounter> instanceCounter,
			ObjectProvider<PlanStore> planStore, RateLimitProperties properties) {
		PlanStore plans = planStore.getIfAvailable();
		return new RedisAccessProbe(store, instanceCounter.getIfAvailable(),
				(plans instanceof RedisPlanStore redisPlans) ? redisPlans : null, properties.getKeyPrefix(),
				properties.getFallback().getMode(), RedisAccessProbe.DEFAULT_TIMEOUT);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBean(MeterRegistry.class)
		RateLimitMetrics rateLimitMetrics(MeterRegistry registry) {
			return new MicrometerRateLimitMetrics(registry);
		}

		/**
		 * The upstream protections' meters ({@code ratelimit.protection.limit}, {@code ratelimit.protection.in.flight},
		 * {@code ratelimit.protection.latency}), registered once per protection when the registry is bound, whatever
		 * the {@link RateLimitMetrics} bean.
		 */
		@Bean
		MeterBinder rateLimitProtectionMeters(ObjectProvider<UpstreamProtections> upstreamProtections) {
			return (meters) -> upstreamProtections
				.ifAvailable((protections) -> MicrometerRateLimitMetrics.bindProtections(protections, meters));
		}

		/**
		 * Counts the breakers' state transitions: {@code ratelimit.circuitbreaker.transitions{breaker,from,to}}
		 * ({@code breaker}: {@code ratelimit-redis}, or {@code ratelimit-redis@host:port} per Cluster master),
		 * including breakers added later.
		 */
		@Bean
		MeterBinder rateLimitCircuitBreakerTransitions(ObjectProvider<DefaultLimiterChain> rateLimitLimiterChain) {
			return (meters) -> {
				DefaultLimiterChain chain = rateLimitLimiterChain.getIfAvailable();
				if (chain != null) {
					CircuitBreakerRegistry registry = chain.circuitBreakers().getRegistry();
					java.util.Set<CircuitBreaker> counted = java.util.concurrent.ConcurrentHashMap.newKeySet();
					registry.getEventPublisher()
						.onEntryAdded((added) -> countTransitions(added.getAddedEntry(), meters, counted));
					registry.getAllCircuitBreakers().forEach((breaker) -> countTransitions(breaker, meters, counted));
				}
			};
		}

		private static void countTransitions(CircuitBreaker breaker, MeterRegistry meters,
				java.util.Set<CircuitBreaker> counted) {
			String name = breaker.getName();
			if (!(name.equals(CIRCUIT_BREAKER_NAME) || name.startsWith(CIRCUIT_BREAKER_NAME + "@"))
					|| !counted.add(breaker)) {
				return; // another breaker of the application's registry, or one already counted
			}
			breaker.getEventPublisher().onStateTransition((event) -> meters
				.counter(MicrometerRateLimitMetrics.TRANSITIONS, "breaker", breaker.getName(), "from",
						event.getStateTransition().getFromState().name().toLowerCase(java.util.Locale.ROOT), "to",
						event.getStateTransition().getToState().name().toLowerCase(java.util.Locale.ROOT))
				.increment());
		}

		/**
		 * The breakers' state and calls as {@code resilience4j.circuitbreaker.*} meters (one set per shard), unless
		 * the application's own {@code CircuitBreakerRegistry} (whose metrics its integration binds) holds them.
		 */
		@Bean
		@ConditionalOnClass(name = "io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics")
		MeterBinder rateLimitCircuitBreakerMetrics(ObjectProvider<DefaultLimiterChain> rateLimitLimiterChain,
				ObjectProvider<CircuitBreakerRegistry> registry) {
			return (meters) -> {
				DefaultLimiterChain chain = rateLimitLimiterChain.getIfAvailable();
				if (chain != null && registry.getIfAvailable() == null) {
					TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(chain.circuitBreakers().getRegistry())
						.bindTo(meters);
				}
			};
		}

	}

}
