package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.MINUTE;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The contract every algorithm of the rate limit script keeps (token bucket {@code tb}, sliding window log
 * {@code swl}, sliding window counter {@code swc}, fixed window {@code fw}), run against a real Redis with Redis-side
 * time controlled by the test (see {@link ScriptAtTime}): the same reply shape, an exact Retry-After, a denial that
 * consumes and writes nothing, a TTL on every written key, huge numbers and long idle times, shrinking limits, a
 * clock stepping back, corrupt state, read-only checks and refunds; and, across algorithms, all-or-nothing.
 */
class RateLimitScriptContractTest {

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	private final TestRedis redis = this.script.redis();

	/** capacity tokens per period: a token bucket refilling capacity per period, or a window of that length. */
	private static Limit limit(String code, long capacity, long periodMicros) {
		return code.equals("tb") ? Limit.tokenBucket(capacity, capacity, periodMicros)
				: Limit.window(code, capacity, periodMicros);
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void freshLimitAdmitsItsCapacityAtOnceThenDenies(String code) {
		Limit limit = limit(code, 5, MINUTE);
		long t = T0 + 7 * SECOND;
		for (int i = 1; i <= 5; i++) {
			Result result = this.script.check(t, 1, "k", limit);
			assertThat(result.allowed()).isTrue();
			assertThat(result.satisfied(0)).isTrue();
			assertThat(result.remaining(0)).isEqualTo(5 - i);
			assertThat(result.retryAfterMs(0)).isZero();
			assertThat(result.resetMs(0)).isPositive();
		}
		Result denied = this.script.check(t, 1, "k", limit);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.satisfied(0)).isFalse();
		assertThat(denied.remaining(0)).isZero();
		long expectedRetryMs = switch (code) {
			case "tb" -> 12_000; // one token back every 12 s
			case "swl" -> 60_000; // the five entries admitted at t leave the window at t + 60 s
			case "fw" -> 53_000; // the window [T0, T0 + 60 s) ends
			default -> 59_001; // next window (53 s), then the previous 5 must weigh < 4.5 (rounds to 4): 6 s + 1 us
		};
		assertThat(denied.retryAfterMs(0)).isEqualTo(expectedRetryMs);
	}

	@ParameterizedTest
	@CsvSource({ "tb, 3", "tb, 2", "swl, 3", "swc, 3", "fw, 3" })
	void waitingExactlyRetryAfterSucceedsAndOneMillisecondLessDoesNot(String code, long capacity) {
		// awkward numbers: 3 tokens per 7 s (a token bucket also with capacity 2), requests every 0.123457 s, some
		// costing 2
		Limit limit = code.equals("tb") ? Limit.tokenBucket(capacity, 3, 7 * SECOND)
				: limit(code, capacity, 7 * SECOND);
		long t = T0 + 1_234_567;
		int denials = 0;
		for (int i = 0; i < 200; i++) {
			long cost = (i % 5 == 4) ? 2 : 1;
			Result result = this.script.check(t, cost, "k", limit);
			if (!result.allowed()) {
				denials++;
				long waitMs = result.retryAfterMs(0);
				assertThat(waitMs).isPositive();
				Result early = this.script.check(t + waitMs * 1000 - 1000, cost, "k", limit);
				assertThat(early.allowed()).as("%s: denied 1 ms before retry-after %d ms", code, waitMs).isFalse();
				Result onTime = this.script.check(t + waitMs * 1000, cost, "k", limit);
				assertThat(onTime.allowed()).as("%s: allowed after waiting %d ms", code, waitMs).isTrue();
				t += waitMs * 1000;
			}
			t += 123_457;
		}
		assertThat(denials).isGreaterThan(20);
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void deniedRequestConsumesAndWritesNothing(String code) {
		Limit limit = limit(code, 2, MINUTE);
		this.script.check(T0, 2, "k", limit);
		String before = this.script.dump("k", 0);
		long ttlBefore = this.script.ttlMillis("k", 0);
		Result denied = this.script.check(T0 + 5 * SECOND, 1, "k", limit);
		assertThat(denied.allowed()).isFalse();
		assertThat(this.script.dump("k", 0)).isEqualTo(before);
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo(ttlBefore);
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void everyWrittenKeyExpiresWhenItsStateNoLongerMatters(String code) {
		Limit limit = limit(code, 10, MINUTE);
		long t = T0 + 15 * SECOND;
		Result result = this.script.check(t, 3, "k", limit);
		long ttl = this.script.ttlMillis("k", 0);
		assertThat(ttl).isPositive().isEqualTo(result.resetMs(0));
		long expected = switch (code) {
			case "tb" -> 18_000; // 3 tokens at 1 per 6 s
			case "swl" -> 60_000; // the entries leave the window
			case "fw" -> 45_000; // the window ends
			default -> 95_001; // the count of 3 weighs in the next window until it rounds to 0: 50 s + 1 us
		};
		assertThat(ttl).isEqualTo(expected);
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void stateAtItsExpiryIsAFullLimit(String code) {
		// the TTL never drops state that still matters: just before expiry it still limits, at expiry it is full
		Limit limit = limit(code, 4, 10 * SECOND);
		long t = T0 + 3 * SECOND;
		this.script.check(t, 4, "k", limit);
		long ttlMicros = this.script.ttlMillis("k", 0) * 1000;
		assertThat(this.script.check(t + ttlMicros, 4, "k", limit).allowed()).isTrue();
		this.redis.flushAll();
		this.script.check(t, 4, "k", limit);
		assertThat(this.script.check(t + ttlMicros - 1000, 4, "k", limit).allowed()).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void hugeLimitAfterTwelveHoursIdleStaysExact(String code) {
		// issue case 1: capacity 1,000,000 per minute; consume 1, 12 hours pass, consume 1
		Limit limit = limit(code, 1_000_000, MINUTE);
		long t = T0 + 1_500_000;
		Result first = this.script.check(t, 1, "k", limit);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining(0)).isEqualTo(999_999);
		Result later = this.script.check(t + 12 * 3600 * SECOND, 1, "k", limit);
		assertThat(later.allowed()).isTrue();
		assertThat(later.remaining(0)).isEqualTo(999_999);
		assertThat(later.retryAfterMs(0)).isZero();
		assertThat(later.resetMs(0)).isBetween(1L, 120_000L);
	}

	@ParameterizedTest
	@ValueSource(strings = { "swc", "fw" }) // tb: TokenBucketScriptTest; swl: capacity at most 1,000,000
	void capacityOf2To53NeverOverflows(String code) {
		long max = 1L << 53;
		Limit limit = limit(code, max, 86_400 * SECOND);
		Result first = this.script.check(T0 + SECOND, max, "k", limit);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining(0)).isZero();
		Result denied = this.script.check(T0 + 2 * SECOND, 1, "k", limit);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMs(0)).isBetween(1L, 2 * 86_400_000L);
		Result afterWait = this.script.check(T0 + 2 * SECOND + denied.retryAfterMs(0) * 1000, 1, "k", limit);
		assertThat(afterWait.allowed()).isTrue();
		Result century = this.script.check(T0 + 3600L * 24 * 365 * 100 * SECOND, max, "k", limit);
		assertThat(century.allowed()).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void shrunkLimitTakesEffectAtOnceAndKeepsRefilling(String code) {
		// issue case 2: full at capacity 5; plan changed to capacity 2 per 1 s; consume 2, wait 2 s, request again
		long t = T0 + 300_000;
		this.script.check(t, 0, "k", limit(code, 5, SECOND)); // a read: the full bucket is stored for tb
		Limit shrunk = limit(code, 2, SECOND);
		Result consumed = this.script.check(t + 1000, 2, "k", shrunk);
		assertThat(consumed.allowed()).isTrue();
		assertThat(consumed.remaining(0)).isZero();
		assertThat(this.script.check(t + 2000, 1, "k", shrunk).allowed()).isFalse();
		Result again = this.script.check(t + 1000 + 2 * SECOND, 1, "k", shrunk);
		assertThat(again.allowed()).isTrue();
		assertThat(again.remaining(0)).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(strings = { "swl", "swc", "fw" }) // tb: TokenBucketScriptTest (no refill until the clock catches up)
	void clockSteppingBackNeverMakesRoom(String code) {
		Limit limit = limit(code, 5, SECOND);
		this.script.check(T0 + 100 * SECOND, 5, "k", limit);
		Result earlier = this.script.check(T0 + 50 * SECOND, 1, "k", limit);
		assertThat(earlier.allowed()).isFalse();
		assertThat(earlier.remaining(0)).isZero();
		assertThat(earlier.retryAfterMs(0)).isPositive();
		// and the wait it announces is enough on the stepped-back clock
		Result after = this.script.check(T0 + 50 * SECOND + earlier.retryAfterMs(0) * 1000, 1, "k", limit);
		assertThat(after.allowed()).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void corruptStateCountsAsAnUnusedLimit(String code) {
		switch (code) {
			case "tb" -> this.redis.command("HSET", "k:0", "tk", "nan", "ts", "garbage");
			case "swl" -> this.redis.command("ZADD", "k:0", "-inf", "ancient");
			default -> this.redis.command("HSET", "k:0", "w", "garbage", "c", "-inf", "p", "nan");
		}
		Result result = this.script.check(T0, 1, "k", limit(code, 5, SECOND));
		assertThat(result.allowed()).isTrue();
		assertThat(result.remaining(0)).isEqualTo(4);
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void costZeroReadsWithoutConsuming(String code) {
		Limit limit = limit(code, 5, MINUTE);
		this.script.check(T0, 2, "k", limit);
		String before = this.script.dump("k", 0);
		Result read = this.script.check(T0, 0, "k", limit);
		assertThat(read.allowed()).isTrue();
		assertThat(read.remaining(0)).isEqualTo(3);
		assertThat(this.script.check(T0, 3, "k", limit).allowed()).isTrue();
		if (!code.equals("tb")) { // the token bucket stores its (unchanged) tokens with the read's time
			this.redis.flushAll();
			this.script.check(T0, 2, "k", limit);
			this.script.check(T0, 0, "k", limit);
			assertThat(this.script.dump("k", 0)).isEqualTo(before);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void refundGivesBackWhatTheCheckTook(String code) {
		Limit limit = limit(code, 5, MINUTE);
		assertThat(this.script.check(T0 + SECOND, 2, "k", limit).allowed()).isTrue();
		assertThat(this.script.refund(2, "k", limit)).isEqualTo(1);
		Result full = this.script.check(T0 + SECOND, 5, "k", limit);
		assertThat(full.allowed()).as("the whole capacity is back").isTrue();
		// refunding a limit whose state has gone changes nothing
		this.redis.flushAll();
		assertThat(this.script.refund(2, "k", limit)).isZero();
		assertThat(this.redis.command("EXISTS", "k:0")).isEqualTo("0");
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "swl", "swc", "fw" })
	void denialByOneLimitConsumesNothingFromLimitsOfEveryOtherAlgorithm(String tightCode) {
		// four limits, one per algorithm; the one of tightCode allows 2, the others 10
		String[] codes = { "tb", "swl", "swc", "fw" };
		Limit[] limits = new Limit[4];
		int tight = -1;
		for (int i = 0; i < 4; i++) {
			boolean isTight = codes[i].equals(tightCode);
			limits[i] = limit(codes[i], isTight ? 2 : 10, MINUTE);
			tight = isTight ? i : tight;
		}
		long t = T0 + 10 * SECOND;
		assertThat(this.script.check(t, 1, "k", limits).allowed()).isTrue();
		assertThat(this.script.check(t, 1, "k", limits).allowed()).isTrue();
		String[] before = new String[4];
		for (int i = 0; i < 4; i++) {
			before[i] = this.script.dump("k", i);
		}
		Result denied = this.script.check(t, 1, "k", limits);
		assertThat(denied.allowed()).isFalse();
		for (int i = 0; i < 4; i++) {
			assertThat(denied.satisfied(i)).isEqualTo(i != tight);
			assertThat(denied.remaining(i)).isEqualTo((i == tight) ? 0 : 8);
			assertThat(this.script.dump("k", i)).as("state of %s", codes[i]).isEqualTo(before[i]);
		}
		assertThat(this.script.check(t + SECOND, 1, "k", limits).allowed()).isFalse();
		assertThat(this.script.check(t + SECOND, 1, "k", limits).remaining((tight + 1) % 4)).isEqualTo(8);
	}

	@Test
	void retryAfterOfTheLongestViolatedLimitAdmitsTheRequest() {
		// each limit violated, each with a different wait: waiting the longest one admits the request
		Limit[] limits = { Limit.tokenBucket(1, 1, 10 * SECOND), Limit.window("swl", 1, 30 * SECOND),
				Limit.window("swc", 1, 20 * SECOND), Limit.window("fw", 1, MINUTE) };
		long t = T0 + 5 * SECOND;
		assertThat(this.script.check(t, 1, "k", limits).allowed()).isTrue();
		Result denied = this.script.check(t + SECOND, 1, "k", limits);
		long longest = 0;
		for (int i = 0; i < 4; i++) {
			assertThat(denied.satisfied(i)).isFalse();
			longest = Math.max(longest, denied.retryAfterMs(i));
		}
		assertThat(longest).isEqualTo(54_000); // the fixed window ends at T0 + 60 s
		assertThat(this.script.check(t + SECOND + longest * 1000 - 1000, 1, "k", limits).allowed()).isFalse();
		assertThat(this.script.check(t + SECOND + longest * 1000, 1, "k", limits).allowed()).isTrue();
	}

	@Test
	void unknownOperationOrAnotherArgumentLayoutIsAnErrorBeforeAnyWrite() {
		assertThatIllegalStateException()
			.isThrownBy(() -> this.redis.command("EVAL", ScriptAtTime.SCRIPT, "1", "k:0", "consume", "1", "tb", "5", "5",
					"1000000", "1"))
			.withMessageContaining("unknown rate limit operation 'consume'");
		// the layout before one argument layout per limit: cost, n, three numbers per limit, the codes after them
		assertThatIllegalStateException()
			.isThrownBy(() -> this.redis.command("EVAL", ScriptAtTime.SCRIPT, "1", "k:0", "1", "1", "5", "5", "1000000",
					"tb"))
			.withMessageContaining("unknown rate limit operation '1'");
		// an argument count that is not 3 + 5n (a check)
		assertThatIllegalStateException()
			.isThrownBy(() -> this.redis.command("EVAL", ScriptAtTime.SCRIPT, "1", "k:0", "check", "2", "0", "tb", "5",
					"5", "1000000", "1"))
			.withMessageContaining("takes 3 + 5n arguments (n = 2 limits), got 8");
		// the layout before one cost per limit: the cost, then n, then four values per limit
		assertThatIllegalStateException()
			.isThrownBy(() -> this.redis.command("EVAL", ScriptAtTime.SCRIPT, "1", "k:0", "check", "1", "0", "1", "tb",
					"5", "5", "1000000"))
			.withMessageContaining("unknown rate limit algorithm code '1' for limit 1");
		assertThat(this.redis.command("EXISTS", "k:0")).isEqualTo("0");
	}

	@Test
	void unknownAlgorithmCodeInARefundIsAnErrorBeforeAnyWrite() {
		Limit known = Limit.tokenBucket(5, 5, SECOND);
		assertThat(this.script.check(T0, 2, "k", known).allowed()).isTrue();
		String before = this.script.dump("k", 0);
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.refund(2, "k", known, new Limit("leaky", 5, 5, SECOND)))
			.withMessageContaining("unknown rate limit algorithm code 'leaky' for limit 2");
		assertThat(this.script.dump("k", 0)).isEqualTo(before);
	}

	@Test
	void unknownAlgorithmCodeIsAnErrorBeforeAnyWrite() {
		Limit[] limits = { Limit.tokenBucket(5, 5, SECOND), new Limit("leaky", 5, 5, SECOND) };
		assertThatIllegalStateException().isThrownBy(() -> this.script.check(T0, 1, "k", limits))
			.withMessageContaining("unknown rate limit algorithm code 'leaky' for limit 2");
		assertThat(this.redis.command("EXISTS", "k:0")).isEqualTo("0");
	}

}
