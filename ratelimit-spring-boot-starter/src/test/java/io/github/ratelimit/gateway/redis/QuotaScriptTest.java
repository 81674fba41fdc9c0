package io.github.ratelimit.gateway.redis;

import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The calendar quota ({@code q}) of the rate limit script, at simulated Redis times ({@link ScriptAtTime}): the
 * gateway sends the period boundaries around its own time ({@link QuotaPeriod#boundariesAround}), Redis' clock picks
 * the period, the count resets at the boundary, a request waits until it, and a gateway clock off by less than a
 * period still counts in Redis' period.
 */
class QuotaScriptTest {

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	/** Days in Berlin: 2026-03-29 has 23 hours (clocks go forward at 02:00). */
	private final QuotaPeriod berlinDays = QuotaPeriod.of(QuotaPeriodUnit.DAY, ZoneId.of("Europe/Berlin"));

	@Test
	void admitsTheLimitPerPeriodAndResetsAtTheBoundaryOnRedisTime() {
		// 2026-03-29 23:59:58 Berlin (+02:00): two seconds before the day ends
		Instant beforeMidnight = Instant.parse("2026-03-29T21:59:58Z");
		Limit quota = quota(3, beforeMidnight);
		long t = micros(beforeMidnight);
		assertThat(this.script.check(t, 2, "k", quota).allowed()).isTrue();
		Result denied = this.script.check(t, 2, "k", quota);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.remaining(0)).isEqualTo(1);
		// until the period ends, exactly: 2 s
		assertThat(denied.retryAfterMs(0)).isEqualTo(2_000);
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo(2_000);
		assertThat(this.script.check(t + 2 * SECOND - 1, 2, "k", quota).allowed()).isFalse();
		// the next day, same boundaries sent (the gateway's clock is behind): Redis' clock picks the new period
		Result nextDay = this.script.check(t + 2 * SECOND, 2, "k", quota);
		assertThat(nextDay.allowed()).isTrue();
		assertThat(nextDay.remaining(0)).isEqualTo(1);
		// 2026-03-30 has 24 hours: the new day ends 24 h after it began
		assertThat(nextDay.resetMs(0)).isEqualTo(24 * 3_600_000L);
	}

	@Test
	void aDaylightSavingDayLasts23Hours() {
		Instant morning = Instant.parse("2026-03-29T06:00:00Z"); // 08:00 in Berlin, summer time since 02:00
		Result taken = this.script.check(micros(morning), 1, "k", quota(5, morning));
		assertThat(taken.allowed()).isTrue();
		// the day ends at 2026-03-29T22:00Z: 16 h after 06:00Z
		assertThat(taken.resetMs(0)).isEqualTo(16 * 3_600_000L);
		assertThat(this.berlinDays.periodAt(morning).length().toHours()).isEqualTo(23);
	}

	@Test
	void anAutumnDaylightSavingDayLasts25HoursAndCountsAsOneDay() {
		// 2026-10-25 in Berlin: clocks go back at 03:00, the day runs from 2026-10-24T22:00Z to 2026-10-25T23:00Z
		Instant justAfterMidnight = Instant.parse("2026-10-24T22:00:00Z");
		Instant lateEvening = Instant.parse("2026-10-25T22:30:00Z"); // 23:30 in Berlin (+01:00), 24.5 h later
		Result first = this.script.check(micros(justAfterMidnight), 2, "k", quota(2, justAfterMidnight));
		assertThat(first.allowed()).isTrue();
		assertThat(first.resetMs(0)).isEqualTo(25 * 3_600_000L);
		assertThat(this.script.check(micros(lateEvening), 1, "k", quota(2, lateEvening)).allowed()).isFalse();
		Result stillDenied = this.script.check(micros(lateEvening), 1, "k", quota(2, lateEvening));
		assertThat(stillDenied.retryAfterMs(0)).isEqualTo(30 * 60_000L);
		// the key, written at the day's start, expires at its end
		assertThat(this.script.ttlMillis("k", 0)).isEqualTo(25 * 3_600_000L);
		Instant nextDay = Instant.parse("2026-10-25T23:00:00Z");
		assertThat(this.script.check(micros(nextDay), 2, "k", quota(2, nextDay)).allowed()).isTrue();
		assertThat(this.berlinDays.periodAt(justAfterMidnight).length().toHours()).isEqualTo(25);
	}

	@Test
	void aGatewayClockAheadOfRedisStillCountsInRedisPeriod() {
		Instant redisNow = Instant.parse("2026-06-30T21:59:59Z"); // 23:59:59 in Berlin, June 30
		Instant gatewayNow = redisNow.plusSeconds(5); // already July 1 on the gateway
		Limit quota = Limit.quota(2, QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneId.of("Europe/Berlin"))
			.boundariesAround(gatewayNow, 4)
			.stream()
			.mapToLong(QuotaScriptTest::micros)
			.toArray());
		Result june = this.script.check(micros(redisNow), 2, "k", quota);
		assertThat(june.allowed()).isTrue();
		assertThat(june.resetMs(0)).isEqualTo(1_000); // June ends in 1 s on Redis' clock
		assertThat(this.script.check(micros(redisNow), 1, "k", quota).allowed()).isFalse();
		assertThat(this.script.check(micros(redisNow) + SECOND, 2, "k", quota).allowed()).isTrue(); // July
	}

	@Test
	void aSettlementChargesThePeriodAndRedisTimeOutsideTheBoundariesIsAnErrorBeforeAnyWrite() {
		Instant now = Instant.parse("2026-12-05T10:00:00Z");
		Limit quota = quota(1_000, now);
		assertThat(this.script.check(micros(now), new long[] { 300 }, "k", quota).allowed()).isTrue();
		this.script.settle(micros(now), new long[] { 900 }, "k", quota);
		Result over = this.script.check(micros(now), new long[] { 1 }, "k", quota);
		assertThat(over.allowed()).isFalse();
		assertThat(over.remaining(0)).isZero();
		String before = this.script.dump("k", 0);
		// a gateway whose clock is two days off sends boundaries that do not hold Redis' time
		Limit stale = quota(1_000, now.minusSeconds(2 * 86_400));
		assertThatIllegalStateException().isThrownBy(() -> this.script.check(micros(now), 1, "k", stale))
			.withMessageContaining("is outside its period boundaries");
		assertThat(this.script.dump("k", 0)).isEqualTo(before);
	}

	private Limit quota(long limit, Instant gatewayNow) {
		List<Instant> boundaries = this.berlinDays.boundariesAround(gatewayNow, 4);
		return Limit.quota(limit, boundaries.stream().mapToLong(QuotaScriptTest::micros).toArray());
	}

	private static long micros(Instant instant) {
		return instant.getEpochSecond() * SECOND + instant.getNano() / 1_000;
	}

}
