package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the token bucket (GCRA form: one number per bucket) of the Lua script itself against a real Redis, at
 * simulated Redis times ({@link ScriptAtTime}), so hours can pass in a test.
 */
class TokenBucketScriptTest {

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	private final TestRedis redis = this.script.redis();

	@Test
	void oneTokenPerMinuteDeniesWithExactRetryAfterAndAllowsAfterIt() {
		// capacity 1, 1 token per 60 s: t=0 allowed, t=1 s denied (59 s), t=59 s denied (1 s), t=61 s allowed
		Limit limit = Limit.tokenBucket(1, 1, 60 * SECOND);
		assertThat(run(at(0), 1, "b", limit).allowed()).isTrue();
		Result at1 = run(at(1), 1, "b", limit);
		assertThat(at1.allowed()).isFalse();
		assertThat(at1.retryAfterMs(0)).isEqualTo(59_000);
		Result at59 = run(at(59), 1, "b", limit);
		assertThat(at59.allowed()).isFalse();
		assertThat(at59.retryAfterMs(0)).isEqualTo(1_000);
		assertThat(run(at(61), 1, "b", limit).allowed()).isTrue();
	}

	@Test
	void deniedRequestConsumesNothingFromAnyLimit() {
		Limit perSecond = Limit.tokenBucket(10, 10, SECOND);
		Limit tight = Limit.tokenBucket(1, 1, 60 * SECOND);
		assertThat(run(at(0), 1, "b", perSecond, tight).allowed()).isTrue();
		Result denied = run(at(0), 1, "b", perSecond, tight);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.satisfied(0)).isTrue();
		assertThat(denied.satisfied(1)).isFalse();
		assertThat(denied.remaining(0)).isEqualTo(9); // not consumed by the denial
		// the stored tat: one token of 100 ms taken at t = 0
		assertThat(this.redis.command("GET", "b:0")).isEqualTo(Long.toString(at(0) + SECOND / 10));
	}

	@Test
	void hugeBucketAfterLongIdleStaysExact() {
		// capacity 1,000,000 refilling 1,000,000 per minute: consume 1, 12 hours pass, consume 1
		Limit limit = Limit.tokenBucket(1_000_000, 1_000_000, 60 * SECOND);
		Result first = run(at(0), 1, "b", limit);
		assertThat(first.remaining(0)).isEqualTo(999_999);
		Result later = run(at(12 * 3600), 1, "b", limit);
		assertThat(later.allowed()).isTrue();
		assertThat(later.remaining(0)).isEqualTo(999_999);
		assertThat(later.resetMs(0)).isBetween(0L, 60L);
	}

	@Test
	void theLargestBucketsNeverOverflow() {
		// the most the configuration allows: 1,000,000 tokens per second, 100 years to fill (3.15e15 tokens)
		long capacity = 3_153_600_000_000_000L;
		Limit fast = Limit.tokenBucket(capacity, 1_000_000, SECOND);
		Result first = run(at(0), capacity, "b", fast);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining(0)).isZero();
		Result denied = run(at(0), 2, "b", fast);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMs(0)).isEqualTo(1);
		assertThat(denied.resetMs(0)).isEqualTo(capacity / 1000);
		// the key expires after 10 years at most (then reads as a full bucket)
		assertThat(this.script.ttlMillis("b", 0)).isEqualTo(315_360_000_000L);
		assertThat(run(at(1), 1_000_000, "b", fast).allowed()).isTrue();
		// one token a day, 100 years to fill
		Limit slow = Limit.tokenBucket(36_500, 1, 86_400 * SECOND);
		assertThat(run(at(0), 36_500, "c", slow).allowed()).isTrue();
		Result slowDenied = run(at(1), 1, "c", slow);
		assertThat(slowDenied.retryAfterMs(0)).isEqualTo(86_399_000L);
		Result decades = run(at(3600L * 24 * 365 * 101), 1, "c", slow);
		assertThat(decades.allowed()).isTrue();
		assertThat(decades.remaining(0)).isEqualTo(36_499);
	}

	@Test
	void fastRateAdmitsCapacityPlusRefill() {
		// 2,000 per second, capacity 2,000: 2,500 requests at one instant admit exactly the capacity
		Limit limit = Limit.tokenBucket(2_000, 2_000, SECOND);
		int burst = 0;
		for (int i = 0; i < 2_500; i++) {
			if (run(at(0), 1, "c", limit).allowed()) {
				burst++;
			}
		}
		assertThat(burst).isEqualTo(2_000);
		// 3,000 requests spread over 0.5 s on a full bucket admit the capacity plus the refill
		int spread = 0;
		long step = 500_000 / 3_000;
		for (int i = 0; i < 3_000; i++) {
			if (run(at(100) + i * step, 1, "d", limit).allowed()) {
				spread++;
			}
		}
		double theory = 2_000 + 2_000 * (2_999 * step) / 1e6;
		assertThat((double) spread).isBetween(theory - 1, theory + 1);
	}

	@Test
	void shrunkCapacityKeepsTheTokensUsed() {
		run(at(0), 30, "b", Limit.tokenBucket(100, 1, SECOND));
		// 30 used of a bucket that now holds 10: empty (never negative), and full again after 10 s
		Result shrunk = run(at(0), 1, "b", Limit.tokenBucket(10, 1, SECOND));
		assertThat(shrunk.allowed()).isFalse();
		assertThat(shrunk.remaining(0)).isZero();
		assertThat(shrunk.retryAfterMs(0)).isEqualTo(1_000);
		assertThat(shrunk.resetMs(0)).isEqualTo(10_000);
		run(at(0), 1, "c", Limit.tokenBucket(100, 1, SECOND));
		assertThat(run(at(0), 1, "c", Limit.tokenBucket(10, 1, SECOND)).remaining(0)).isEqualTo(8);
	}

	@Test
	void everyWrittenKeyExpiresWhenItsBucketIsFullAgain() {
		Limit limit = Limit.tokenBucket(10, 1, SECOND);
		run(at(0), 3, "b", limit);
		assertThat(this.script.ttlMillis("b", 0)).isEqualTo(3_000);
	}

	@Test
	void corruptStateCountsAsFullBucket() {
		this.redis.command("SET", "b:0", "garbage");
		Result result = run(at(0), 1, "b", Limit.tokenBucket(5, 1, SECOND));
		assertThat(result.allowed()).isTrue();
		assertThat(result.remaining(0)).isEqualTo(4);
		this.redis.command("SET", "c:0", "nan:inf:-1");
		assertThat(run(at(0), 1, "c", Limit.tokenBucket(5, 1, SECOND)).remaining(0)).isEqualTo(4);
		// a hash under the bucket's name (whatever its fields)
		this.redis.command("HSET", "d:0", "tk", "nan", "ts", "garbage");
		assertThat(run(at(0), 1, "d", Limit.tokenBucket(5, 1, SECOND)).remaining(0)).isEqualTo(4);
		// a key of another type under the bucket's name: a full bucket too, replaced by the bucket
		this.redis.command("RPUSH", "e:0", "x");
		assertThat(run(at(0), 1, "e", Limit.tokenBucket(5, 1, SECOND)).remaining(0)).isEqualTo(4);
		assertThat(this.redis.command("TYPE", "e:0")).isEqualTo("string");
	}

	@Test
	void aHashUnderTheBucketsNameIsAFullBucketReplacedByTheBucket() {
		// {tk, ts} (2 tokens 3 s ago): never a layout of this script, so not read: a full bucket of 10
		this.redis.command("HSET", "b:0", "tk", "2", "ts", Long.toString(at(-3)));
		Result result = run(at(0), 1, "b", Limit.tokenBucket(10, 1, SECOND));
		assertThat(result.allowed()).isTrue();
		assertThat(result.remaining(0)).isEqualTo(9);
		assertThat(this.redis.command("TYPE", "b:0")).isEqualTo("string");
		assertThat(this.redis.command("GET", "b:0")).isEqualTo(Long.toString(at(1)));
	}

	@Test
	void aRefundGivesTheTokensBackToTheStoredTatKeepingTheTtl() {
		Limit limit = Limit.tokenBucket(10, 1, SECOND);
		run(at(0), 4, "b", limit);
		assertThat(this.script.refund(3, "b", limit)).isEqualTo(1);
		assertThat(this.redis.command("GET", "b:0")).isEqualTo(Long.toString(at(1)));
		assertThat(this.script.refund(3, "missing", limit)).isZero();
	}

	@Test
	void clockSteppingBackNeverGoesNegative() {
		Limit limit = Limit.tokenBucket(5, 1, SECOND);
		run(at(100), 5, "b", limit);
		Result earlier = run(at(50), 1, "b", limit);
		assertThat(earlier.allowed()).isFalse();
		assertThat(earlier.remaining(0)).isZero();
		assertThat(earlier.retryAfterMs(0)).isEqualTo(1_000);
	}

	private long at(long seconds) {
		return T0 + seconds * SECOND;
	}

	private Result run(long timeMicros, long cost, String keyBase, Limit... limits) {
		return this.script.check(timeMicros, cost, keyBase, limits);
	}

}
