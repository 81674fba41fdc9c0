package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.RedisServer;
import io.github.ratelimit.test.redis.TcpProxy;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The base of the tests of a gateway whose Redis (a redis-server of their own) is reached through a {@link TcpProxy}
 * that can delay its replies, and that Redis killed and restarted for real: sequential traffic on a normal route
 * ({@code /fast}, plan free) and the critical one ({@code /auth/login}, a client address of its own per request, so
 * its own limit never denies), with the breaker's openings recorded.
 */
@ActiveProfiles("gateway-it")
abstract class ProxiedRedisRouteIntegrationTest extends BaseRouteIntegrationTest {

	/** The gateway's Redis, one process for the test JVM (both subclasses), stopped by its shutdown hook. */
	protected static final RedisServer redis = RedisServer.start();

	/** The network between the gateway and {@link #redis} (daemon threads, for the test JVM). */
	protected static final TcpProxy network = TcpProxy.start(redis.host(), redis.port());

	/** The time the test JVM stood still, measured from the class's start (bounds on elapsed time leave it out). */
	protected static final MachineStalls stalls = MachineStalls.meter();

	private static final AtomicInteger loginClients = new AtomicInteger();

	/** Transitions of the breaker, with the time they happened ({@link System#nanoTime()}). */
	protected static final List<long[]> opened = new CopyOnWriteArrayList<>();

	/** Every transition of the breaker, as "nanoTime FROM->TO", for the messages of failed assertions. */
	protected static final List<String> transitions = new CopyOnWriteArrayList<>();

	private static CircuitBreaker watched;

	@Autowired
	private DefaultLimiterChain chain;

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> "redis://" + network.host() + ":" + network.port());
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
				transitions.add(System.nanoTime() + " " + event.getStateTransition());
				if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
					opened.add(new long[] { System.nanoTime() });
				}
			});
		}
		breaker.reset(); // a fresh window, as after start-up or any close
		opened.clear();
		transitions.clear();
	}

	/**
	 * Check that the breaker never opened sooner than its wait after its previous opening.
	 * @param wait the breaker's wait in the open state, as the subclass configures it
	 */
	protected static void assertOpenedAtMostOncePerWait(Duration wait) {
		for (int i = 1; i < opened.size(); i++) {
			long apart = opened.get(i)[0] - opened.get(i - 1)[0];
			assertThat(apart).as("opened %d ms after the previous opening", apart / 1_000_000)
				.isGreaterThanOrEqualTo(wait.toNanos() - 10_000_000);
		}
	}

	/**
	 * The breaker's transitions since the test began, in ms relative to a moment.
	 * @param since the moment ({@link System#nanoTime()})
	 * @return e.g. {@code [-2100 ms CLOSED_TO_OPEN, -1090 ms OPEN_TO_HALF_OPEN]}
	 */
	protected static List<String> transitionsSince(long since) {
		return transitions.stream().map((line) -> {
			int space = line.indexOf(' ');
			long at = Long.parseLong(line.substring(0, space));
			return (at - since) / 1_000_000 + " ms " + line.substring(space + 1);
		}).toList();
	}

	/**
	 * The breaker's wait in the open state ({@code ratelimit.circuit-breaker.wait-duration-in-open-state}).
	 * @return the wait
	 */
	protected Duration breakerWait() {
		return Duration.ofMillis(breaker().getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1));
	}

	protected CircuitBreaker breaker() {
		return this.chain.circuitBreakers().breaker(StoreShards.SINGLE_SHARD);
	}

	protected EntityExchangeResult<byte[]> fast() {
		return this.client.get().uri("/fast/x").header("X-API-Key", "key-one").exchange().expectBody().returnResult();
	}

	/** The critical route, from a client address of its own each time (so its own limit never denies). */
	protected EntityExchangeResult<byte[]> login() {
		int n = loginClients.incrementAndGet();
		return this.client.get().uri("/auth/login")
			.header("X-Forwarded-For", "198.18." + ((n >> 8) & 255) + "." + (n & 255))
			.exchange()
			.expectBody()
			.returnResult();
	}

	protected static boolean fromRedis(EntityExchangeResult<byte[]> result) {
		return result.getStatus().value() == 200 && result.getResponseHeaders().getFirst("RateLimit") != null;
	}

	/** Sequential requests, normal and critical in turn, for a while. */
	protected static final class Traffic {

		int requests;

		int fromRedis;

		int failedClosed;

		int serverErrorsOnNormalRoutes;

		List<Long> millis = new ArrayList<>();

		static Traffic during(ProxiedRedisRouteIntegrationTest test, Duration duration) {
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
