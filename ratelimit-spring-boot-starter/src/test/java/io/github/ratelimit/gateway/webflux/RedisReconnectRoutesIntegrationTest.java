package io.github.ratelimit.gateway.webflux;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An opening of the breaker lasts until the limiter's connection is back, not the breaker's wait (issue 27, part 4),
 * through the real gateway and a redis-server of its own: with a wait of 10 s, an outage under traffic opens the
 * breaker; once Redis runs again, decisions come from Redis within 500 ms of Lettuce reporting the reconnect
 * (measured from that report, less the time the machine stood still).
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=5s",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=10s" })
class RedisReconnectRoutesIntegrationTest extends ProxiedRedisRouteIntegrationTest {

	/** Longest time from the reconnect to a decision from Redis, less stalls. */
	private static final Duration BOUND = Duration.ofMillis(500);

	/** When Lettuce reported a connection of the limiter's client established ({@link System#nanoTime()}). */
	private static final List<Long> connected = new CopyOnWriteArrayList<>();

	@Autowired
	private LimiterConnectionFactory limiterConnections;

	@Test
	void anOpeningEndsWithinHalfASecondOfTheReconnectNotAfterTheWait() {
		((LettuceConnectionFactory) this.limiterConnections.getConnectionFactory()).getRequiredNativeClient()
			.addListener(new RedisConnectionStateListener() {

				@Override
				public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress remote) {
					connected.add(System.nanoTime());
				}

			});
		redis.kill();
		long down = System.nanoTime();
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(() -> {
			assertThat(fast().getStatus().value()).isEqualTo(200); // the fallback's
			return breaker().getState() == CircuitBreaker.State.OPEN;
		});
		redis.restart(); // returns once Redis answers
		long answering = System.nanoTime();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
			.until(() -> connected.stream().anyMatch((at) -> at > down));
		long reconnected = connected.stream().filter((at) -> at > down).findFirst().orElseThrow();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5)).until(() -> fromRedis(fast()));
		long back = System.nanoTime();
		long stalled = stalls.stalledNanos(reconnected, back);
		String figures = String.format("Decisions from Redis %d ms after Lettuce reported the reconnect (%d ms after"
				+ " Redis answered; breaker wait 10 s; the machine stood still %d ms of that); breaker transitions"
				+ " (ms since the reconnect) %s", (back - reconnected) / 1_000_000, (back - answering) / 1_000_000,
				stalled / 1_000_000, transitionsSince(reconnected));
		System.out.println(figures);
		assertThat(back - reconnected - stalled).as(figures).isLessThanOrEqualTo(BOUND.toNanos());
		EntityExchangeResult<byte[]> after = fast();
		assertThat(fromRedis(after)).as("still decided by Redis: %s", figures).isTrue();
		assertThat(breaker().getState()).isIn(CircuitBreaker.State.HALF_OPEN, CircuitBreaker.State.CLOSED);
	}

}
