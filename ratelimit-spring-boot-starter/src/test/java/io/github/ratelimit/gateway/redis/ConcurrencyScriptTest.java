package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The concurrency limit of the rate limit script ({@code cc}: slots taken by {@code acquire}, given back by
 * {@code release}, freed by age after the longest request duration), run against a real Redis with Redis-side time
 * controlled by the test (see {@link ScriptAtTime}).
 */
class ConcurrencyScriptTest {

	private static final Limit THREE_IN_FLIGHT = Limit.concurrency(3, 30 * SECOND);

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	private final TestRedis redis = this.script.redis();

	@Test
	void admitsMaxInFlightThenDeniesWithoutWriting() {
		for (int i = 1; i <= 3; i++) {
			Result result = this.script.acquire(T0 + i, 1, "slot-" + i, "k", THREE_IN_FLIGHT);
			assertThat(result.allowed()).isTrue();
			assertThat(result.remaining(0)).isEqualTo(3 - i);
			assertThat(result.retryAfterMs(0)).isZero();
		}
		String before = this.script.dump("k", 0);
		Result denied = this.script.acquire(T0 + 5 * SECOND, 1, "slot-4", "k", THREE_IN_FLIGHT);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.satisfied(0)).isFalse();
		assertThat(denied.remaining(0)).isZero();
		// no hold time measured yet: one second, the estimate of a limit that has never seen a release
		assertThat(denied.retryAfterMs(0)).isEqualTo(1000);
		assertThat(this.script.dump("k", 0)).isEqualTo(before);
		assertThat(this.redis.command("ZCARD", "k:0")).isEqualTo("3");
	}

	@Test
	void aReleasedSlotIsFreeAtOnceAndItsHoldTimeIsAveraged() {
		this.script.acquire(T0, 1, "a", "k", THREE_IN_FLIGHT);
		this.script.acquire(T0, 1, "b", "k", THREE_IN_FLIGHT);
		this.script.acquire(T0, 1, "c", "k", THREE_IN_FLIGHT);
		assertThat(this.script.release(T0 + 2 * SECOND, 0, "b", "k", THREE_IN_FLIGHT)).isEqualTo(1);
		assertThat(this.script.averageHoldMicros("k", 0)).isEqualTo(2 * SECOND);
		Result result = this.script.acquire(T0 + 2 * SECOND, 1, "d", "k", THREE_IN_FLIGHT);
		assertThat(result.allowed()).isTrue();
		assertThat(result.remaining(0)).isZero();
		// a later hold of 10 s moves the average by 1/8 of the difference: 2 + (10 - 2) / 8 = 3 s
		assertThat(this.script.release(T0 + 10 * SECOND, 0, "a", "k", THREE_IN_FLIGHT)).isEqualTo(1);
		assertThat(this.script.averageHoldMicros("k", 0)).isEqualTo(3 * SECOND);
	}

	@Test
	void aSecondReleaseOfTheSameSlotChangesNothing() {
		this.script.acquire(T0, 1, "a", "k", THREE_IN_FLIGHT);
		assertThat(this.script.release(T0 + SECOND, 0, "a", "k", THREE_IN_FLIGHT)).isEqualTo(1);
		long average = this.script.averageHoldMicros("k", 0);
		assertThat(this.script.release(T0 + 9 * SECOND, 0, "a", "k", THREE_IN_FLIGHT)).isZero();
		assertThat(this.script.release(T0 + 9 * SECOND, 0, "never-taken", "k", THREE_IN_FLIGHT)).isZero();
		assertThat(this.script.averageHoldMicros("k", 0)).isEqualTo(average);
	}

	@Test
	void anExpiredSlotNotYetTrimmedAndAnAbandonedOneLeaveTheAverageAlone() {
		this.script.acquire(T0, 1, "a", "k", THREE_IN_FLIGHT);
		this.script.release(T0 + 2 * SECOND, 0, "a", "k", THREE_IN_FLIGHT); // average 2 s
		this.script.acquire(T0, 1, "late", "k", THREE_IN_FLIGHT);
		// 31 s later: expired, but no acquire has trimmed it yet
		assertThat(this.redis.command("ZCARD", "k:0")).isEqualTo("1");
		assertThat(this.script.release(T0 + 31 * SECOND, 0, "late", "k", THREE_IN_FLIGHT)).isZero();
		assertThat(this.redis.command("ZCARD", "k:0")).isEqualTo("0");
		assertThat(this.script.averageHoldMicros("k", 0)).isEqualTo(2 * SECOND);
		// a slot the request never used goes back without its (short) hold time
		this.script.acquire(T0 + 40 * SECOND, 1, "unused", "k", THREE_IN_FLIGHT);
		assertThat(this.script.abandon(T0 + 40 * SECOND + 1, 0, "unused", "k", THREE_IN_FLIGHT)).isEqualTo(1);
		assertThat(this.redis.command("ZCARD", "k:0")).isEqualTo("0");
		assertThat(this.script.averageHoldMicros("k", 0)).isEqualTo(2 * SECOND);
	}

	@Test
	void retryEstimateIsWhenTheOldestSlotHasBeenHeldAsLongAsTheAverageBoundedByItsExpiry() {
		this.script.acquire(T0, 1, "m", "k", THREE_IN_FLIGHT);
		this.script.release(T0 + 4 * SECOND, 0, "m", "k", THREE_IN_FLIGHT); // average hold 4 s
		this.script.acquire(T0 + 10 * SECOND, 1, "a", "k", THREE_IN_FLIGHT);
		this.script.acquire(T0 + 11 * SECOND, 1, "b", "k", THREE_IN_FLIGHT);
		this.script.acquire(T0 + 12 * SECOND, 1, "c", "k", THREE_IN_FLIGHT);
		// the oldest (10 s) is expected back at 14 s
		assertThat(this.script.acquire(T0 + 12 * SECOND + 500_000, 1, "d", "k", THREE_IN_FLIGHT).retryAfterMs(0))
			.isEqualTo(1500);
		// held longer than the average already: no wait to estimate
		assertThat(this.script.acquire(T0 + 20 * SECOND, 1, "d", "k", THREE_IN_FLIGHT).retryAfterMs(0)).isZero();
		// a short limit (2 s) whose oldest slot expires before the average says: the expiry bounds the estimate
		Limit shortHold = Limit.concurrency(1, 2 * SECOND);
		this.script.acquire(T0, 1, "x", "s", shortHold);
		this.script.release(T0 + SECOND, 0, "x", "s", shortHold);
		this.redis.command("HSET", "s:0:h", "h", Long.toString(60 * SECOND));
		this.script.acquire(T0 + 10 * SECOND, 1, "y", "s", shortHold);
		assertThat(this.script.acquire(T0 + 10 * SECOND + 500_000, 1, "z", "s", shortHold).retryAfterMs(0))
			.isEqualTo(1500);
	}

	@Test
	void aSlotNeverReleasedIsFreedAfterTheLongestRequestDurationAndNotBefore() {
		Limit one = Limit.concurrency(1, 30 * SECOND);
		assertThat(this.script.acquire(T0, 1, "dead-instance", "k", one).allowed()).isTrue();
		Result justBefore = this.script.acquire(T0 + 30 * SECOND - 1, 1, "next", "k", one);
		assertThat(justBefore.allowed()).isFalse();
		assertThat(justBefore.retryAfterMs(0)).isLessThanOrEqualTo(1);
		Result atExpiry = this.script.acquire(T0 + 30 * SECOND, 1, "next", "k", one);
		assertThat(atExpiry.allowed()).isTrue();
		// the expired slot was trimmed when the new one was taken
		assertThat(this.redis.command("ZRANGE", "k:0", "0", "-1")).isEqualTo("next");
	}

	@Test
	void everyWriteSetsATtlEndingWhenTheStateNoLongerMatters() {
		this.script.acquire(T0, 1, "a", "k", THREE_IN_FLIGHT);
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo(30_000);
		this.script.release(T0 + SECOND, 0, "a", "k", THREE_IN_FLIGHT);
		assertThat(this.redis.command("HGET", ScriptAtTime.TTL_HASH, "k:0:h")).isEqualTo("3600000");
	}

	@Test
	void aReadTakesNoSlotAndTellsTheFreeOnes() {
		this.script.acquire(T0, 1, "a", "k", THREE_IN_FLIGHT);
		Result read = this.script.check(T0 + SECOND, 0, "k", THREE_IN_FLIGHT);
		assertThat(read.allowed()).isTrue();
		assertThat(read.remaining(0)).isEqualTo(2);
		assertThat(this.redis.command("ZCARD", "k:0")).isEqualTo("1");
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.check(T0, new long[] { 1 }, "k", THREE_IN_FLIGHT))
			.withMessageContaining("check: limit 1 (cc) cannot cost '1'");
	}

	@Test
	void aSlotIsOneWhateverTheCost() {
		Result result = this.script.acquire(T0, 7, "a", "k", THREE_IN_FLIGHT);
		assertThat(result.allowed()).isTrue();
		assertThat(result.remaining(0)).isEqualTo(2);
	}

	@Test
	void mixedWithARateLimitADenialOfEitherTakesNothingFromTheOther() {
		Limit rate = Limit.tokenBucket(10, 10, SECOND);
		Limit oneInFlight = Limit.concurrency(1, 30 * SECOND);
		assertThat(this.script.acquire(T0, 1, "a", "k", rate, oneInFlight).allowed()).isTrue();
		String tokens = this.script.dump("k", 0);
		// denied by the concurrency limit: no token taken
		Result bySlots = this.script.acquire(T0, 1, "b", "k", rate, oneInFlight);
		assertThat(bySlots.allowed()).isFalse();
		assertThat(bySlots.satisfied(0)).isTrue();
		assertThat(bySlots.satisfied(1)).isFalse();
		assertThat(this.script.dump("k", 0)).isEqualTo(tokens);
		this.script.release(T0, 0, "a", "k", rate, oneInFlight);
		// denied by the rate limit (cost 10, the bucket holds 9): no slot taken
		Result byRate = this.script.acquire(T0, 10, "c", "k", rate, oneInFlight);
		assertThat(byRate.allowed()).isFalse();
		assertThat(byRate.satisfied(0)).isFalse();
		assertThat(byRate.satisfied(1)).isTrue();
		assertThat(this.redis.command("ZCARD", "k:1")).isEqualTo("0");
	}

	@Test
	void releaseWithACostAlsoGivesTheTokensBack() {
		Limit rate = Limit.tokenBucket(10, 10, 60 * SECOND);
		Limit oneInFlight = Limit.concurrency(1, 30 * SECOND);
		assertThat(this.script.acquire(T0, 4, "a", "k", rate, oneInFlight).remaining(0)).isEqualTo(6);
		// an abandoned acquire: its slot and its tokens come back in one call
		assertThat(this.script.release(T0, 4, "a", "k", rate, oneInFlight)).isEqualTo(2);
		Result after = this.script.check(T0, 0, "k", rate, oneInFlight);
		assertThat(after.remaining(0)).isEqualTo(10);
		assertThat(after.remaining(1)).isEqualTo(1);
	}

	@Test
	void aRefundLeavesTheSlotsAlone() {
		Limit rate = Limit.tokenBucket(10, 10, 60 * SECOND);
		this.script.acquire(T0, 1, "a", "k", rate, THREE_IN_FLIGHT);
		assertThat(this.script.refund(1, "k", rate, THREE_IN_FLIGHT)).isEqualTo(1);
		assertThat(this.redis.command("ZCARD", "k:1")).isEqualTo("1");
	}

	@Test
	void aCallWithoutTheHoldStatisticsKeyIsRefused() {
		assertThatIllegalStateException()
			.isThrownBy(() -> this.redis.command("EVAL", ScriptAtTime.SCRIPT, "1", "k:0", "acquire", "1", "a", "0", "cc",
					"3", "3", Long.toString(30 * SECOND), "1"))
			.withMessageContaining("takes n + 1 keys");
		assertThat(this.redis.command("EXISTS", "k:0")).isEqualTo("0");
	}

}
