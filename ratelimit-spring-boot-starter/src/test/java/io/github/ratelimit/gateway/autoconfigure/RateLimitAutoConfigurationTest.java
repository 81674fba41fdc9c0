package io.github.ratelimit.gateway.autoconfigure;

import java.util.Optional;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.actuate.RateLimiterHealthIndicator;
import io.github.ratelimit.gateway.actuate.RateLimitsEndpointProperties;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.chain.LimiterChain;
import io.github.ratelimit.gateway.chain.LimiterChainCustomizer;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.client.ClientKeyResolver;
import io.github.ratelimit.gateway.webflux.RateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.plan.PrincipalPlanResolver;
import io.github.ratelimit.gateway.plan.SecurityPrincipalPlanResolver;
import io.github.ratelimit.gateway.plan.StaticPlanResolver;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitAutoConfigurationTest {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class))
		.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
				"ratelimit.plans.anonymous.default[0].refill-tokens=60",
				"ratelimit.plans.anonymous.default[0].refill-period=1m");

	@Test
	void everyClassNamedInImportsLoadsAndIsAnAutoConfiguration() throws IOException, ClassNotFoundException {
		String location = "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";
		List<String> names;
		try (InputStream in = getClass().getClassLoader().getResourceAsStream(location)) {
			names = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
				.map(String::strip)
				.filter((l) -> !l.isEmpty() && !l.startsWith("#"))
				.toList();
		}
		assertThat(names).contains(RateLimitAutoConfiguration.class.getName(),
				RateLimitDisabledAutoConfiguration.class.getName(),
				RateLimitHealthAutoConfiguration.class.getName(), RateLimitEndpointAutoConfiguration.class.getName(),
				RateLimitPlanStoreAutoConfiguration.class.getName(),
				RateLimitClientAddressAutoConfiguration.class.getName(),
				RateLimitLettuceAutoConfiguration.class.getName(),
				RateLimitRedisClusterAutoConfiguration.class.getName(),
				RateLimitSecurityAutoConfiguration.class.getName(),
				RateLimitRedisConnectionAutoConfiguration.class.getName());
		for (String name : names) {
			assertThat(Class.forName(name)).hasAnnotation(AutoConfiguration.class);
		}
	}

	@Test
	void createsTheFilterAndRedisLimiterWhenRedisIsConfigured() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RateLimitGatewayFilterFactory.class);
			// the chain, built layer by layer over the store bean: over-limit cache -> failure policy (with the local
			// fallback) -> scopes -> leases -> shard breakers -> store; one chain bean, one store bean
			assertThat(context).getBean("rateLimitStore").isInstanceOf(RedisRateLimitStore.class);
			assertThat(context).hasSingleBean(RateLimitStore.class).hasSingleBean(LimiterChain.class);
			DefaultLimiterChain chain = context.getBean(DefaultLimiterChain.class);
			assertThat(chain).hasToString("OverLimitCache -> FailurePolicyLimiter -> ScopedRateLimiter -> "
					+ "LeasingRateLimiter -> ShardCircuitBreakers -> " + context.getBean("rateLimitStore"));
			assertThat(chain.overLimitCache()).isNotNull();
			assertThat(chain.fallbackMode()).isEqualTo(FallbackMode.LOCAL);
			assertThat(context).getBean(PlanResolver.class).isInstanceOf(StaticPlanResolver.class);
			assertThat(context).hasSingleBean(ClientKeyResolver.class);
		});
	}

	@Test
	void withSpringSecurityPrincipalPlansComeFromClaimsAndAuthorities() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitSecurityAutoConfiguration.class))
			.withPropertyValues("ratelimit.principal.plan-claim=tier", "ratelimit.principal.plan-authority-prefix=TIER_")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).getBean(PrincipalPlanResolver.class)
					.isInstanceOf(SecurityPrincipalPlanResolver.class)
					.hasToString("SecurityPrincipalPlanResolver[claim=tier, authorityPrefix=TIER_]");
			});
	}

	@Test
	void withoutSpringSecurityTheStarterStartsAndPrincipalsNameNoPlan() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitSecurityAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.security."))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(ClientKeyResolver.class);
				assertThat(context).getBean(PrincipalPlanResolver.class).isSameAs(PrincipalPlanResolver.NAME_ONLY);
			});
	}

	@Test
	void backsOffWithoutRedis() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
					"ratelimit.plans.anonymous.default[0].refill-tokens=60",
					"ratelimit.plans.anonymous.default[0].refill-period=1m")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitStore.class)
				.doesNotHaveBean(RateLimitGatewayFilterFactory.class));
	}

	@Test
	void userBeansReplaceTheDefaults() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			// the user's store, under the starter's layers (a single store bean)
			assertThat(context).doesNotHaveBean("rateLimitStore").hasSingleBean(PlanResolver.class);
			assertThat(context).hasSingleBean(RateLimitStore.class);
			// a store that cannot lease gets no lease layer
			DefaultLimiterChain chain = context.getBean(DefaultLimiterChain.class);
			assertThat(chain).hasToString("OverLimitCache -> FailurePolicyLimiter -> ScopedRateLimiter -> "
					+ "ShardCircuitBreakers -> " + UserBeans.LIMITER);
			PlanLimits limits = new PlanLimits("free", "api", List.of(new LimitDefinition("free-api", 1, 1,
					java.time.Duration.ofSeconds(1))));
			assertThat(chain.store().tryConsume(new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "free"), limits, 1)
				.join()).isEqualTo(RateLimitDecision.unavailable(limits));
			assertThat(context.getBean(PlanResolver.class)).isSameAs(UserBeans.PLANS);
			assertThat(context).hasSingleBean(RateLimitGatewayFilterFactory.class);
		});
	}

	@Test
	void theOverLimitCacheCanBeTurnedOff() {
		this.runner.withPropertyValues("ratelimit.over-limit-cache.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(RateLimitGatewayFilterFactory.class);
			DefaultLimiterChain chain = context.getBean(DefaultLimiterChain.class);
			assertThat(chain.overLimitCache()).isNull();
			assertThat(chain.toString()).startsWith("FailurePolicyLimiter -> ");
		});
	}

	@Test
	void customizersChangeTheChainAfterTheProperties() {
		LimiterChainCustomizer allow = (builder) -> builder.fallbackMode(FallbackMode.ALLOW);
		LimiterChainCustomizer noCache = (builder) -> builder.overLimitCache(false, 1);
		this.runner.withBean("allow", LimiterChainCustomizer.class, () -> allow)
			.withBean("noCache", LimiterChainCustomizer.class, () -> noCache)
			.run((context) -> {
				DefaultLimiterChain chain = context.getBean(DefaultLimiterChain.class);
				assertThat(chain.fallbackMode()).isEqualTo(FallbackMode.ALLOW);
				assertThat(chain.overLimitCache()).isNull();
			});
	}

	@Test
	void aChainOfTheApplicationsOwnReplacesTheBuiltOne() {
		LimiterChain own = (request) -> CompletableFuture.completedFuture(RateLimitDecision.unavailable(request.limits()));
		this.runner.withBean(LimiterChain.class, () -> own).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(DefaultLimiterChain.class);
			assertThat(context).hasSingleBean(RateLimitHandler.class).hasSingleBean(RateLimitGatewayFilterFactory.class);
		});
	}

	@Test
	void reusesTheApplicationsCircuitBreakerRegistry() {
		CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
		this.runner.withBean(CircuitBreakerRegistry.class, () -> registry).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(registry.find(RateLimitAutoConfiguration.CIRCUIT_BREAKER_NAME)).isPresent();
			assertThat(context.getBean(DefaultLimiterChain.class).circuitBreakers().breaker(StoreShards.SINGLE_SHARD))
				.isSameAs(registry.circuitBreaker(RateLimitAutoConfiguration.CIRCUIT_BREAKER_NAME));
		});
	}

	@Test
	void registersTheHealthComponent() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class,
					RateLimitHealthAutoConfiguration.class))
			.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
					"ratelimit.plans.anonymous.default[0].refill-tokens=60",
					"ratelimit.plans.anonymous.default[0].refill-period=1m")
			.run((context) -> assertThat(context).hasSingleBean(RateLimiterHealthIndicator.class));
	}

	@Test
	void endpointShowsClientsOnlyToAuthorizedCallersByDefault() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RateLimitsEndpointProperties access = context.getBean(RateLimitsEndpointProperties.class);
				assertThat(access.getShowClients()).isEqualTo(Show.WHEN_AUTHORIZED);
				assertThat(access.getRoles()).isEmpty();
			});
	}

	@Test
	void endpointAccessPropertiesBind() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.ratelimits.show-clients=never",
					"management.endpoint.ratelimits.roles=OPERATOR,ROLE_ADMIN")
			.run((context) -> {
				RateLimitsEndpointProperties access = context.getBean(RateLimitsEndpointProperties.class);
				assertThat(access.getShowClients()).isEqualTo(Show.NEVER);
				assertThat(access.getRoles()).containsExactly("OPERATOR", "ROLE_ADMIN");
			});
	}

	@Test
	void aBadShowClientsValueStopsStartUpNamingTheProperty() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.ratelimits.show-clients=operators")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'management.endpoint.ratelimits.show-clients'"));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		static final RateLimitStore LIMITER = (client, limits, cost) -> CompletableFuture
			.completedFuture(RateLimitDecision.unavailable(limits));

		static final PlanResolver PLANS = (apiKey) -> CompletableFuture.completedFuture(Optional.empty());

		@Bean
		RateLimitStore myLimiter() {
			return LIMITER;
		}

		@Bean
		PlanResolver myPlans() {
			return PLANS;
		}

	}

}
