package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.RedisServer;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The base of the route tests that kill, pause and restart Redis for real: the gateway's Redis is a redis-server
 * process of these tests' own ({@link #redis}), not the shared test Redis. Before each test it is restarted if a
 * test left it killed, and the test waits until decisions come from it again (the circuit breaker closed through
 * half-open), with empty buckets.
 */
abstract class OwnRedisRouteIntegrationTest extends BaseRouteIntegrationTest {

	/**
	 * The gateway's Redis, one process for the test JVM, used by these test classes in turn (each restarts it if
	 * needed); stopped by {@link RedisServer}'s shutdown hook.
	 */
	static final RedisServer redis = RedisServer.start();

	/** The time the test JVM stood still, measured from the class's start (bounds on elapsed time leave it out). */
	protected static final MachineStalls stalls = MachineStalls.meter();

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", redis::uri);
	}

	/** Restarts the Redis a previous test killed, then waits for decisions from it with empty buckets. */
	@Override
	protected void emptyBuckets() {
		try {
			redis.command("PING");
		}
		catch (RuntimeException ex) {
			redis.restart(); // a previous test left it killed
		}
		awaitDecisionsFromRedis();
	}

	/**
	 * Waits (at most 20 s) until the breaker has closed again (through half-open) and a decision came from Redis,
	 * then empties the buckets again.
	 */
	protected void awaitDecisionsFromRedis() {
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
			redis.flushAll();
			this.overLimitCache.clear();
			assertThat(this.client.get().uri("/b/probe").header("X-API-Key", "key-two").exchange().expectBody()
				.returnResult().getResponseHeaders().getFirst("RateLimit")).isNotNull();
			this.client.get().uri("/actuator/health").exchange().expectBody()
				.jsonPath("$.components.rateLimiter.details.circuitBreaker").isEqualTo("CLOSED");
		});
		redis.flushAll();
		this.overLimitCache.clear();
	}

}
