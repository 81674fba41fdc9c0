package io.github.ratelimit.gateway.redis;

import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The script's {@code topup} and {@code quota} operations on a calendar quota ({@code q}), at simulated Redis times
 * ({@link ScriptAtTime}): a top-up lowers the period's use (below zero too), makes the state when there is none with
 * its TTL at the period's end, ends with the period, survives a refund, and bad input is an error before any write;
 * {@code quota} reads the use and Redis' period.
 */
class QuotaTopUpScriptTest {

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	/** Days in Berlin: 2026-12-05 is a day of 24 hours, from 2026-12-04T23:00Z to 2026-12-05T23:00Z. */
	private final QuotaPeriod berlinDays = QuotaPeriod.of(QuotaPeriodUnit.DAY, ZoneId.of("Europe/Berlin"));

	private final Instant now = Instant.parse("2026-12-05T10:00:00Z");

	private final long dayStart = micros(Instant.parse("2026-12-04T23:00:00Z"));

	private final long dayEnd = micros(Instant.parse("2026-12-05T23:00:00Z"));

	@Test
	void aTopUpAdmitsExactlyThatManyMoreAndMayTakeTheUseBelowZero() {
		Limit quota = quota(3);
		long t = micros(this.now);
		assertThat(this.script.drain(t, "k", quota)).isEqualTo(3);
		assertThat(this.script.quotas(t, "k", quota)).containsExactly(3, this.dayStart, this.dayEnd);
		assertThat(this.script.topUp(t, new long[] { 2 }, "k", quota)).isEqualTo(2);
		assertThat(this.script.quotas(t, "k", quota)).containsExactly(1, this.dayStart, this.dayEnd);
		assertThat(this.script.check(t, 0, "k", quota).remaining(0)).isEqualTo(2);
		assertThat(this.script.drain(t, "k", quota)).isEqualTo(2);
		// beyond the use: 10 more than the limit's 3 this day; a check reports at most the limit as remaining
		assertThat(this.script.topUp(t, new long[] { 13 }, "k", quota)).isEqualTo(13);
		assertThat(this.script.quotas(t, "k", quota)).containsExactly(-10, this.dayStart, this.dayEnd);
		assertThat(this.script.check(t, 0, "k", quota).remaining(0)).isEqualTo(3);
		// a quota resets at its period's end, whatever its use
		assertThat(this.script.check(t, 0, "k", quota).resetMs(0)).isEqualTo((this.dayEnd - t) / 1000);
		assertThat(this.script.drain(t, "k", quota)).isEqualTo(13);
		assertThat(this.script.dump("k", 0)).isEqualTo("p\n" + this.dayStart + "\nc\n18\nt\n15");
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo((this.dayEnd - t) / 1000);
	}

	@Test
	void aTopUpWithoutStateMakesTheStateOfRedisPeriodExpiringAtItsEnd() {
		Limit quota = quota(3);
		long t = micros(this.now);
		assertThat(this.script.topUp(t, new long[] { 4 }, "k", quota)).isEqualTo(4);
		assertThat(this.script.dump("k", 0)).isEqualTo("p\n" + this.dayStart + "\nc\n0\nt\n4");
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo(13 * 3_600_000L);
		assertThat(this.script.quotas(t, "k", quota)).containsExactly(-4, this.dayStart, this.dayEnd);
		assertThat(this.script.drain(t, "k", quota)).isEqualTo(7);
	}

	@Test
	void aTopUpEndsWithItsPeriodAndARefundNeverTakesIt() {
		Limit quota = quota(3);
		long t = micros(this.now);
		assertThat(this.script.check(t, 2, "k", quota).allowed()).isTrue();
		this.script.topUp(t, new long[] { 5 }, "k", quota);
		// a refund of 4 takes the admitted 2 only (floored at 0): the top-up stays
		assertThat(this.script.refund(4, "k", quota)).isEqualTo(1);
		assertThat(this.script.quotas(t, "k", quota)).containsExactly(-5, this.dayStart, this.dayEnd);
		// the next day on Redis' clock (same boundaries sent): use 0, the top-up gone
		long nextDay = this.dayEnd + SECOND;
		long nextDayEnd = micros(Instant.parse("2026-12-06T23:00:00Z"));
		assertThat(this.script.quotas(nextDay, "k", quota)).containsExactly(0, this.dayEnd, nextDayEnd);
		assertThat(this.script.drain(nextDay, "k", quota)).isEqualTo(3);
		assertThat(this.script.dump("k", 0)).isEqualTo("p\n" + this.dayEnd + "\nc\n3\nt\n0");
	}

	@Test
	void onlyAQuotaIsToppedUpAndTheOtherLimitsAreRead() {
		Limit bucket = Limit.tokenBucket(10, 1, SECOND);
		Limit quota = quota(3);
		long t = micros(this.now);
		assertThat(this.script.check(t, 1, "k", bucket, quota).allowed()).isTrue();
		String bucketBefore = this.script.dump("k", 0);
		assertThat(this.script.topUp(t, new long[] { 0, 1 }, "k", bucket, quota)).isEqualTo(1);
		assertThat(this.script.dump("k", 0)).isEqualTo(bucketBefore);
		assertThat(this.script.quotas(t, "k", bucket, quota)).containsExactly(0, 0, 0, 0, this.dayStart, this.dayEnd);
		assertThat(this.script.topUp(t, new long[] { 0, 0 }, "k", bucket, quota)).isZero();
	}

	@Test
	void badInputIsAnErrorBeforeAnyWrite() {
		Limit bucket = Limit.tokenBucket(10, 1, SECOND);
		Limit quota = quota(3);
		long t = micros(this.now);
		assertThat(this.script.check(t, 1, "k", quota, bucket).allowed()).isTrue();
		String quotaBefore = this.script.dump("k", 0);
		String bucketBefore = this.script.dump("k", 1);
		// tokens for a limit that is not a quota, negative, above 2^53; the quota, first, is not written either
		assertThatIllegalStateException().isThrownBy(() -> this.script.topUp(t, new long[] { 2, 1 }, "k", quota, bucket))
			.withMessageContaining("limit 2 (tb) cannot cost '1'");
		assertThatIllegalStateException().isThrownBy(() -> this.script.topUp(t, new long[] { -1, 0 }, "k", quota, bucket))
			.withMessageContaining("limit 1 (q) cannot cost '-1'");
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.topUp(t, new long[] { (1L << 53) + 2, 0 }, "k", quota, bucket))
			.withMessageContaining("limit 1 (q) cannot cost");
		// a gateway clock two days off: Redis' time is outside the boundaries it sent
		Limit stale = quota(3, this.now.minusSeconds(2 * 86_400));
		assertThatIllegalStateException().isThrownBy(() -> this.script.topUp(t, new long[] { 1, 0 }, "k", stale, bucket))
			.withMessageContaining("is outside its period boundaries");
		// a read ('quota') takes no tokens
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.redis().command("EVAL", ScriptAtTime.SCRIPT, "1", "k:0",
					RedisRateLimitStore.QUOTA, "1", "q", "3", "3", quota.periodText(), "1"))
			.withMessageContaining("rate limit quota: limit 1 (q) cannot cost '1'");
		assertThat(this.script.dump("k", 0)).isEqualTo(quotaBefore);
		assertThat(this.script.dump("k", 1)).isEqualTo(bucketBefore);
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo((this.dayEnd - t) / 1000);
	}

	@Test
	void theTopUpsOfAPeriodAddUpToAtMostTwoToThe53LessTheLimit() {
		Limit quota = quota(3);
		long t = micros(this.now);
		// the answer is the tokens added: up to the bound, then none
		assertThat(this.script.topUp(t, new long[] { 1L << 53 }, "k", quota)).isEqualTo((1L << 53) - 3);
		assertThat(this.script.topUp(t, new long[] { 1L << 53 }, "k", quota)).isZero();
		assertThat(this.script.topUp(t, new long[] { 1 }, "k", quota)).isZero();
		assertThat(this.script.quotas(t, "k", quota)).containsExactly(3 - (1L << 53), this.dayStart, this.dayEnd);
	}

	@Test
	void aTopUpUnderARaisedLimitNeverLowersTheTopUpsMadeBefore() {
		long t = micros(this.now);
		assertThat(this.script.topUp(t, new long[] { 1L << 53 }, "k", quota(3))).isEqualTo((1L << 53) - 3);
		// the limit raised to 10 at runtime: the bound is now 2^53 - 10, below what was topped up
		assertThat(this.script.topUp(t, new long[] { 1 }, "k", quota(10))).isZero();
		assertThat(this.script.quotas(t, "k", quota(10))).containsExactly(3 - (1L << 53), this.dayStart, this.dayEnd);
	}

	private Limit quota(long limit) {
		return quota(limit, this.now);
	}

	private Limit quota(long limit, Instant gatewayNow) {
		List<Instant> boundaries = this.berlinDays.boundariesAround(gatewayNow, 4);
		return Limit.quota(limit, boundaries.stream().mapToLong(QuotaTopUpScriptTest::micros).toArray());
	}

	private static long micros(Instant instant) {
		return instant.getEpochSecond() * SECOND + instant.getNano() / 1_000;
	}

}
