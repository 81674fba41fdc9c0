package io.github.ratelimit.gateway.filter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.chain.ShardCircuitBreakers;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.test.redis.RedisServer;
import io.github.ratelimit.test.redis.TcpProxy;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recovery without relapse (issue 15), through the real gateway and a redis-server of its own behind a
 * {@link TcpProxy}: after an outage of any length, decisions come from Redis within the breaker's wait plus a second
 * of Redis answering and stay there (no re-open); a slow Redis (replies delayed 5, 15, 40 ms against a 30 ms timeout)
 * is used as long as its checks answer within the timeout, is left once they do not (at 40 ms: no decision from
 * Redis at all), and its breaker never opens more often than once per wait. How many checks of a 5 or 15 ms Redis
 * answer within the timeout depends on the machine's load: the figures are printed, not asserted.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=30ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class RedisRecoveryRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final Duration WAIT = Duration.ofSeconds(1);

	private static final RedisServer redis = RedisServer.start();

	private static final TcpProxy network = TcpProxy.start(redis.host(), redis.port());

	private static final AtomicInteger loginClients = new AtomicInteger();

	/** Transitions of the breaker, with the time they happened ({@link System#nanoTime()}). */
	private static final List<long[]> opened = new CopyOnWriteArrayList<>();

	private static CircuitBreaker watched;

	@Autowired
	private ShardCircuitBreakers breakers;

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> "redis://" + network.host() + ":" + network.port());
	}

	@AfterAll
	static void stop() {
		network.close();
		redis.close();
	}

	@Override
	protected void emptyBuckets() {
		network.delay(Duration.ZERO);
		try {
			redis.command("PING");
		}
		catch (RuntimeException ex) {
			redis.restart();
		}
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
			.until(() -> fromRedis(fast()) && breaker().getState() == CircuitBreaker.State.CLOSED);
		redis.flushAll();
		this.overLimitCache.clear();
	}

	@BeforeEach
	void watchTheBreaker() {
		CircuitBreaker breaker = breaker();
		if (watched != breaker) {
			watched = breaker;
			breaker.getEventPublisher().onStateTransition((event) -> {
				if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
					opened.add(new long[] { System.nanoTime() });
				}
			});
		}
		breaker.reset(); // a fresh window, as after start-up or any close
		opened.clear();
	}

	@Test
	void aShortOutageEndsAtTheFirstAnswerWithoutReopeningTheBreaker() {
		redis.kill();
		for (int i = 0; i < 4; i++) { // fewer failures than the 5 minimum calls: the breaker stays closed
			assertThat(fromRedis(fast())).isFalse();
		}
		assertThat(breaker().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		recoverAndStay("4 failed checks");
	}

	@Test
	void aLongOutageEndsWithinTheWaitPlusASecondAndDoesNotRelapse() {
		redis.kill();
		long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		while (System.nanoTime() < until) { // traffic through the outage: the breaker opens, its trials fail
			assertThat(fast().getStatus().value()).isEqualTo(200);
			assertThat(login().getStatus().value()).isEqualTo(503);
		}
		assertThat(opened).as("the breaker opened during the outage").isNotEmpty();
		recoverAndStay("Redis killed for 3 s");
	}

	@Test
	void aSlowRedisIsUsedBelowTheTimeoutAndLeftAboveItOpeningAtMostOncePerWait() {
		StringBuilder figures = new StringBuilder("Slow Redis, redis-timeout 30 ms, breaker wait 1 s:");
		for (int delay : new int[] { 5, 15, 40 }) {
			network.delay(Duration.ofMillis(delay));
			opened.clear();
			Traffic traffic = Traffic.during(this, Duration.ofSeconds(3));
			figures.append(String.format("%n  reply delay %2d ms: %s", delay, traffic));
			assertThat(traffic.serverErrorsOnNormalRoutes).as("5xx at %d ms", delay).isZero();
			assertOpenedAtMostOncePerWait();
			if (delay == 40) {
				assertThat(traffic.fromRedis).as("decisions from Redis at 40 ms, over the timeout").isZero();
			}
		}
		network.delay(Duration.ZERO);
		long healed = System.nanoTime();
		await().atMost(WAIT.plusSeconds(1)).pollInterval(Duration.ofMillis(20)).until(() -> fromRedis(fast()));
		figures.append(String.format("%n  delay removed: decisions from Redis again %d ms later",
				(System.nanoTime() - healed) / 1_000_000));
		System.out.println(figures);
	}

	/**
	 * Restart Redis; decisions come from Redis within the wait plus one second of Redis answering, and for the next
	 * 2 s of traffic the breaker does not open again.
	 */
	private void recoverAndStay(String outage) {
		redis.restart(); // returns once Redis answers
		long answering = System.nanoTime();
		await().atMost(WAIT.plusSeconds(1)).pollInterval(Duration.ofMillis(10)).until(() -> fromRedis(fast()));
		long back = System.nanoTime();
		int opensBefore = opened.size();
		Traffic after = Traffic.during(this, Duration.ofSeconds(2));
		System.out.printf("Outage (%s): decisions from Redis %d ms after it answered again (wait 1 s); then %s%n",
				outage, (back - answering) / 1_000_000, after);
		assertThat(opened.size()).as("re-opened after recovery: %s", after).isEqualTo(opensBefore);
		assertThat(after.serverErrorsOnNormalRoutes).isZero();
		assertThat(after.fromRedis).as("decided by Redis after recovery: %s", after).isPositive();
	}

	private void assertOpenedAtMostOncePerWait() {
		for (int i = 1; i < opened.size(); i++) {
			long apart = opened.get(i)[0] - opened.get(i - 1)[0];
			assertThat(apart).as("opened %d ms after the previous opening", apart / 1_000_000)
				.isGreaterThanOrEqualTo(WAIT.toNanos() - 10_000_000);
		}
	}

	private CircuitBreaker breaker() {
		return this.breakers.breaker(StoreShards.SINGLE_SHARD);
	}

	private EntityExchangeResult<byte[]> fast() {
		return this.client.get().uri("/fast/x").header("X-API-Key", "key-one").exchange().expectBody().returnResult();
	}

	/** The critical route, from a client address of its own each time (so its own limit never denies). */
	private EntityExchangeResult<byte[]> login() {
		int n = loginClients.incrementAndGet();
		return this.client.get().uri("/auth/login")
			.header("X-Forwarded-For", "198.18." + ((n >> 8) & 255) + "." + (n & 255))
			.exchange()
			.expectBody()
			.returnResult();
	}

	private static boolean fromRedis(EntityExchangeResult<byte[]> result) {
		return result.getStatus().value() == 200 && result.getResponseHeaders().getFirst("RateLimit") != null;
	}

	/** Sequential requests, normal and critical in turn, for a while. */
	private static final class Traffic {

		int requests;

		int fromRedis;

		int failedClosed;

		int serverErrorsOnNormalRoutes;

		List<Long> millis = new ArrayList<>();

		static Traffic during(RedisRecoveryRoutesIntegrationTest test, Duration duration) {
			Traffic traffic = new Traffic();
			long until = System.nanoTime() + duration.toNanos();
			while (System.nanoTime() < until) {
				long start = System.nanoTime();
				EntityExchangeResult<byte[]> normal = test.fast();
				traffic.millis.add((System.nanoTime() - start) / 1_000_000);
				traffic.requests++;
				traffic.fromRedis += fromRedis(normal) ? 1 : 0;
				traffic.serverErrorsOnNormalRoutes += (normal.getStatus().is5xxServerError()) ? 1 : 0;
				int login = test.login().getStatus().value();
				assertThat(login).isIn(200, 503);
				traffic.failedClosed += (login == 503) ? 1 : 0;
			}
			return traffic;
		}

		@Override
		public String toString() {
			List<Long> sorted = new ArrayList<>(this.millis);
			sorted.sort(null);
			return String.format("%d requests, %d decided by Redis (%.0f%%), %d logins failed closed, "
					+ "%d openings of the breaker, median %d ms", this.requests, this.fromRedis,
					100.0 * this.fromRedis / Math.max(1, this.requests), this.failedClosed, opened.size(),
					sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 2));
		}

	}

}
