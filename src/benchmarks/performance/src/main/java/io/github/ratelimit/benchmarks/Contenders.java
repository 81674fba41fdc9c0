package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.RateLimitRequest;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;

import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.scripting.support.ResourceScriptSource;

/**
 * The contenders, each set up the way its documentation (or its own auto-configuration) does it, over the same
 * key count and the same limits.
 */
final class Contenders {

	/** Scenarios: which limits apply. */
	enum Scenario {

		/** capacity 1,000,000, refill 1,000,000/s: (practically) every check allowed. */
		ALLOWED,

		/** every key already over its limit: every check denied. */
		OVER,

		/** one client far over its limit (10 per minute in the starter and Bucket4j, 1/s in Gateway's). */
		HOT

	}

	static final String STARTER = "starter";

	static final String STARTER_STORE = "starter-store";

	static final String GATEWAY = "gateway-redis";

	static final String BUCKET4J = "bucket4j";

	/** Times a starter run began with its circuit breaker not closed (and it was reset). */
	static final java.util.concurrent.atomic.AtomicInteger BREAKER_RESETS = new java.util.concurrent.atomic.AtomicInteger();

	private Contenders() {
	}

	private static String group(Scenario scenario) {
		return switch (scenario) {
			case ALLOWED -> BenchContext.GROUP_ALLOWED;
			case OVER -> BenchContext.GROUP_OVER;
			case HOT -> BenchContext.GROUP_HOT;
		};
	}

	private static ClientKey[] clients(Scenario scenario, int keys) {
		ClientKey[] clients = new ClientKey[keys];
		for (int i = 0; i < keys; i++) {
			// as the filter does: the Redis key holds the API key's hash, never the key
			clients[i] = new ClientKey(ClientKey.Kind.API_KEY,
					ApiKeyHasher.hash("bench-" + scenario.name().toLowerCase() + "-key-" + i), BenchContext.PLAN);
		}
		return clients;
	}

	/**
	 * The starter as the filter uses it: the {@link DefaultLimiterChain} bean (over-limit cache, failure policy,
	 * breakers, metrics, as the auto-configuration builds it) over the Redis store.
	 */
	static Contender starter(ConfigurableApplicationContext context, Scenario scenario, int keys) {
		// the chain as the filter has it: the over-limit cache (if enabled) in front of the failure policy, and so on
		DefaultLimiterChain checker = context.getBean(DefaultLimiterChain.class);
		io.github.resilience4j.circuitbreaker.CircuitBreaker breaker = checker.circuitBreakers()
			.breaker(io.github.ratelimit.gateway.chain.StoreShards.SINGLE_SHARD);
		PlanLimits limits = context.getBean(LimitResolver.class).limitsFor(BenchContext.PLAN, group(scenario));
		ClientKey[] clients = clients(scenario, keys);
		return new Contender() {
			@Override
			public String name() {
				return STARTER;
			}

			@Override
			public void prepare() {
				if (breaker.getState() != io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED) {
					BREAKER_RESETS.incrementAndGet();
					org.slf4j.LoggerFactory.getLogger(Contenders.class)
						.warn("circuit breaker {} before a run: reset", breaker.getState());
					breaker.reset();
				}
			}

			@Override
			public void check(int key, Sink sink) {
				checker.check(new RateLimitRequest(clients[key], limits, 1, false))
					.whenComplete((decision, error) -> done(sink, decision, error));
			}
		};
	}

	/** The starter's Redis store alone (the {@link RateLimitStore} bean), without the failure policy. */
	static Contender starterStore(ConfigurableApplicationContext context, Scenario scenario, int keys) {
		RateLimitStore limiter = context.getBean("rateLimitStore", RateLimitStore.class);
		PlanLimits limits = context.getBean(LimitResolver.class).limitsFor(BenchContext.PLAN, group(scenario));
		ClientKey[] clients = clients(scenario, keys);
		return new Contender() {
			@Override
			public String name() {
				return STARTER_STORE;
			}

			@Override
			public void check(int key, Sink sink) {
				limiter.tryConsume(clients[key], limits, 1).whenComplete((decision, error) -> done(sink, decision, error));
			}
		};
	}

	private static void done(Contender.Sink sink, RateLimitDecision decision, Throwable error) {
		if (error != null) {
			sink.failed(error);
		}
		else {
			sink.done(decision.allowed(), decision.source().name());
		}
	}

	/**
	 * Spring Cloud Gateway's {@link RedisRateLimiter}, built as {@code GatewayRedisAutoConfiguration} builds it (Boot's
	 * {@link ReactiveStringRedisTemplate}, the script {@code META-INF/scripts/request_rate_limiter.lua}, a
	 * {@link ConfigurationService}) and configured per route as Gateway's own tests do
	 * ({@code getConfig().put(routeId, config)}).
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	static Contender gateway(ConfigurableApplicationContext context, Scenario scenario, int keys) {
		DefaultRedisScript script = new DefaultRedisScript<>();
		script.setScriptSource(
				new ResourceScriptSource(new ClassPathResource("META-INF/scripts/request_rate_limiter.lua")));
		script.setResultType(List.class);
		ConfigurationService configurationService = new ConfigurationService(context.getBeanFactory(),
				DefaultConversionService::getSharedInstance, () -> null);
		RedisRateLimiter limiter = new RedisRateLimiter(context.getBean(ReactiveStringRedisTemplate.class),
				(RedisScript<List<Long>>) script, configurationService);
		String routeId = "bench-" + scenario.name().toLowerCase();
		RedisRateLimiter.Config config = switch (scenario) {
			case ALLOWED -> new RedisRateLimiter.Config().setReplenishRate(1_000_000)
				.setBurstCapacity(1_000_000)
				.setRequestedTokens(1);
			// Gateway's limits are whole tokens per second: a request of 2 tokens against a burst of 1 is always
			// denied, the same script path (GETs, SETEXs) as any denial
			case OVER -> new RedisRateLimiter.Config().setReplenishRate(1).setBurstCapacity(1).setRequestedTokens(2);
			case HOT -> new RedisRateLimiter.Config().setReplenishRate(1).setBurstCapacity(10).setRequestedTokens(1);
		};
		limiter.getConfig().put(routeId, config);
		String[] ids = new String[keys];
		for (int i = 0; i < keys; i++) {
			ids[i] = "bench-" + scenario.name().toLowerCase() + "-key-" + i;
		}
		return new Contender() {
			@Override
			public String name() {
				return GATEWAY;
			}

			@Override
			public void check(int key, Sink sink) {
				limiter.isAllowed(routeId, ids[key])
					.subscribe((response) -> sink.done(response.isAllowed(), "SHARED"), sink::failed);
			}
		};
	}

	/**
	 * Bucket4j's Lettuce proxy manager (compare-and-swap), as its documentation sets it up: its own
	 * {@code RedisClient}, a {@code String}/{@code byte[]} connection, expiry based on the refill time, and the
	 * asynchronous API ({@code asAsync()}) for non-blocking callers.
	 */
	static Contender bucket4j(String host, int port, Scenario scenario, int keys) {
		RedisClient client = RedisClient.create(RedisURI.create(host, port));
		StatefulRedisConnection<String, byte[]> connection = client
			.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
		AsyncProxyManager<String> proxyManager = Bucket4jLettuce.casBasedBuilder(connection)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
			.build()
			.asAsync();
		BucketConfiguration configuration = switch (scenario) {
			case ALLOWED -> BucketConfiguration.builder()
				.addLimit((limit) -> limit.capacity(1_000_000).refillGreedy(1_000_000, Duration.ofSeconds(1)))
				.build();
			case OVER -> BucketConfiguration.builder()
				.addLimit((limit) -> limit.capacity(1).refillGreedy(1, Duration.ofHours(1)))
				.build();
			case HOT -> BucketConfiguration.builder()
				.addLimit((limit) -> limit.capacity(10).refillGreedy(10, Duration.ofMinutes(1)))
				.build();
		};
		CompletableFuture<BucketConfiguration> configurationFuture = CompletableFuture.completedFuture(configuration);
		AsyncBucketProxy[] buckets = new AsyncBucketProxy[keys];
		for (int i = 0; i < keys; i++) {
			buckets[i] = proxyManager.builder()
				.build("b4j:{bench-" + scenario.name().toLowerCase() + "-key-" + i + "}", () -> configurationFuture);
		}
		return new Contender() {
			@Override
			public String name() {
				return BUCKET4J;
			}

			@Override
			public void check(int key, Sink sink) {
				buckets[key].tryConsume(1).whenComplete((allowed, error) -> {
					if (error != null) {
						sink.failed(error);
					}
					else {
						sink.done(allowed, "SHARED");
					}
				});
			}

			@Override
			public void close() {
				connection.close();
				client.shutdown();
			}
		};
	}

}
