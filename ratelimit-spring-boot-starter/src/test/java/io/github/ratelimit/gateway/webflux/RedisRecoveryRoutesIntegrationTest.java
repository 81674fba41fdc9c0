package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recovery without relapse (issue 15), through the real gateway and a redis-server of its own: after an outage of
 * any length, decisions come from Redis within the breaker's wait plus a second of Redis answering and stay there (no
 * re-open). The timeout is generous (checks against a killed Redis fail at once, Lettuce rejecting them), so that a
 * loaded machine's slow checks are not mistaken for a relapse; a slow Redis against a tight timeout is
 * {@link SlowRedisRoutesIntegrationTest}'s.
 */
// The breaker's wait in the open state is longer than Lettuce's reconnect delay cap (1 s), so the bound of the wait
// plus a second leaves room for one reconnect attempt that fails just before Redis answers (the next comes up to a
// second later) on a loaded machine.
@TestPropertySource(properties = { "ratelimit.redis-timeout=5s",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=2s" })
class RedisRecoveryRoutesIntegrationTest extends ProxiedRedisRouteIntegrationTest {

	@Test
	void aShortOutageEndsWithinTheWaitPlusASecondAndDoesNotRelapse() {
		redis.kill();
		for (int i = 0; i < 4; i++) { // fewer failures than the 5 minimum calls: the breaker stays closed
			assertThat(fromRedis(fast())).isFalse();
		}
		assertThat(breaker().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		// a check refused before Lettuce has reconnected may still open it (the 5th failure, after Redis answered):
		// then it closes through a trial after the wait
		recoverAndStay("4 failed checks");
	}

	@Test
	void aLongOutageEndsWithinTheWaitPlusASecondAndDoesNotRelapse() {
		redis.kill();
		long start = System.nanoTime();
		long until = start + Duration.ofSeconds(3).toNanos();
		long atMost = start + Duration.ofSeconds(30).toNanos();
		int rounds = 0;
		// traffic through the outage for 3 s, and until the breaker has opened (on a loaded machine 3 s may hold fewer
		// checks than its minimum number of calls): the breaker opens, its trials fail
		while (System.nanoTime() < until || (opened.isEmpty() && System.nanoTime() < atMost)) {
			assertThat(fast().getStatus().value()).isEqualTo(200);
			assertThat(login().getStatus().value()).isEqualTo(503);
			rounds++;
		}
		assertThat(opened).as("the breaker opened during the outage (%d rounds of two checks in %d ms; breaker %s)",
				rounds, (System.nanoTime() - start) / 1_000_000, breaker().getMetrics().getNumberOfFailedCalls()
						+ " failed calls of " + breaker().getMetrics().getNumberOfBufferedCalls())
			.isNotEmpty();
		recoverAndStay("Redis killed for 3 s");
	}

	/**
	 * Restart Redis; decisions come from Redis within the wait plus one second of Redis answering (not counting the
	 * time the machine stood still meanwhile, measured by {@link #stalls}), and for the next 2 s of traffic the
	 * breaker does not open again.
	 */
	private void recoverAndStay(String outage) {
		redis.restart(); // returns once Redis answers
		long answering = System.nanoTime();
		List<String> answers = new CopyOnWriteArrayList<>(); // the last few, for the message of a failure
		try {
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(() -> {
				EntityExchangeResult<byte[]> answer = fast();
				answers.add((System.nanoTime() - answering) / 1_000_000 + " ms: " + answer.getStatus().value()
						+ " RateLimit " + answer.getResponseHeaders().getFirst("RateLimit"));
				if (answers.size() > 6) {
					answers.remove(0);
				}
				return fromRedis(answer);
			});
		}
		catch (ConditionTimeoutException ex) {
			throw new AssertionError(String.format("Outage (%s): no decision from Redis within 30 s of Redis"
					+ " answering; breaker %s, its transitions (ms since Redis answered) %s, the last answers %s",
					outage, breaker().getState(), transitionsSince(answering), answers), ex);
		}
		long back = System.nanoTime();
		long stalled = stalls.stalledNanos(answering, back);
		int opensBefore = opened.size();
		Traffic after = Traffic.during(this, Duration.ofSeconds(2));
		String figures = String.format("Outage (%s): decisions from Redis %d ms after it answered again (wait %d s;"
				+ " the machine stood still %d ms of that); then %s; breaker transitions (ms since Redis answered) %s",
				outage, (back - answering) / 1_000_000, breakerWait().toSeconds(), stalled / 1_000_000, after,
				transitionsSince(answering));
		System.out.println(figures);
		assertThat(back - answering - stalled).as("time to decisions from Redis, less stalls: %s; last answers %s",
				figures, answers).isLessThanOrEqualTo(breakerWait().plusSeconds(1).toNanos());
		assertThat(opened.size()).as("re-opened after recovery: %s", figures).isEqualTo(opensBefore);
		assertThat(after.serverErrorsOnNormalRoutes).isZero();
		assertThat(after.fromRedis).as("decided by Redis after recovery: %s", figures).isPositive();
	}

}
