package io.github.ratelimit.gateway.filter;

import java.time.Duration;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recovery without relapse (issue 15), through the real gateway and a redis-server of its own: after an outage of
 * any length, decisions come from Redis within the breaker's wait plus a second of Redis answering and stay there (no
 * re-open). The timeout is generous (checks against a killed Redis fail at once, Lettuce rejecting them), so that a
 * loaded machine's slow checks are not mistaken for a relapse; a slow Redis against a tight timeout is
 * {@link SlowRedisRoutesIntegrationTest}'s.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=1s",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class RedisRecoveryRoutesIntegrationTest extends ProxiedRedisRouteIntegrationTest {

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

}
