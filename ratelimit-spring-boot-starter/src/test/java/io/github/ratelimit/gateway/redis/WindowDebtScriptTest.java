package io.github.ratelimit.gateway.redis;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.MINUTE;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * A usage limit's debt in the window algorithms and calendar quotas, at simulated Redis times ({@link ScriptAtTime}):
 * a settlement that charges a fixed window, a sliding window counter or a quota beyond its capacity is carried into
 * the windows (periods) after, {@code max(0, count - capacity)} per window elapsed, until the client has waited off
 * what it used beyond its plan; the key lives until then, and {@code Retry-After} is exact. Limits counting requests
 * never carry anything: their state and arithmetic are as before.
 */
class WindowDebtScriptTest {

	private static final long DAY = 86_400 * SECOND;

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	/** 1,000 units per one-minute fixed window. */
	private final Limit fixed = Limit.window("fw", 1_000, MINUTE);

	/** 1,000 units per minute, sliding window counter. */
	private final Limit sliding = Limit.window("swc", 1_000, MINUTE);

	/** Days in UTC. */
	private final QuotaPeriod days = QuotaPeriod.of(QuotaPeriodUnit.DAY, ZoneOffset.UTC);

	@Test
	void aFixedWindowCarriesTheExcessIntoTheWindowsAfterUntilRepaid() {
		assertThat(this.script.check(T0, new long[] { 600 }, "f", this.fixed).allowed()).isTrue();
		// the answer used 3,500: 2,900 more than reserved, 2,500 beyond the window's capacity
		assertThat(this.script.settle(T0 + SECOND, new long[] { 2_900 }, "f", this.fixed)).containsExactly(2_900);
		// the debt is carried into windows 1, 2 and 3 (2,500, 1,500, 500 counted): the key lives until window 4
		assertThat(this.script.ttlMillis("f", 0)).isEqualTo(4 * 60_000 - 1_000);
		Result denied = this.script.check(T0 + SECOND, new long[] { 1 }, "f", this.fixed);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.remaining(0)).isZero();
		// 1 more unit fits once at most 999 are counted: window 3, which starts with 500
		assertThat(denied.retryAfterMs(0)).isEqualTo(3 * 60_000 - 1_000);
		assertThat(denied.resetMs(0)).isEqualTo(4 * 60_000 - 1_000);
		assertThat(this.script.check(T0 + MINUTE, new long[] { 1 }, "f", this.fixed).allowed()).isFalse();
		Result windowTwo = this.script.check(T0 + 2 * MINUTE, new long[] { 1 }, "f", this.fixed);
		assertThat(windowTwo.allowed()).isFalse();
		assertThat(windowTwo.retryAfterMs(0)).isEqualTo(60_000);
		assertThat(this.script.check(T0 + 3 * MINUTE - 1, new long[] { 1 }, "f", this.fixed).allowed()).isFalse();
		// window 3 starts with the last 500 counted: 500 admitted, not one more
		Result windowThree = this.script.check(T0 + 3 * MINUTE, new long[] { 500 }, "f", this.fixed);
		assertThat(windowThree.allowed()).isTrue();
		assertThat(windowThree.remaining(0)).isZero();
		assertThat(this.script.check(T0 + 3 * MINUTE, new long[] { 1 }, "f", this.fixed).allowed()).isFalse();
		// repaid: window 4 is whole, and the state no longer owes
		assertThat(this.script.check(T0 + 4 * MINUTE, new long[] { 1_000 }, "f", this.fixed).allowed()).isTrue();
		assertThat(this.script.redis().command("HGET", "f:0", "d")).isEqualTo("0");
		// over windows 0 to 4 the client got 5 windows' capacity: 3,500 + 500 + 1,000
	}

	@Test
	void aFixedWindowDebtIsCarriedWhenNoCallCameInBetweenAndChargedOnlyOnce() {
		assertThat(this.script.check(T0, new long[] { 1_000 }, "f", this.fixed).allowed()).isTrue();
		assertThat(this.script.settle(T0, new long[] { 1_200 }, "f", this.fixed)).containsExactly(1_200);
		// three windows later, untouched meanwhile: 2,200 - 3 x 1,000 is nothing
		assertThat(this.script.check(T0 + 3 * MINUTE, new long[] { 1_000 }, "f", this.fixed).allowed()).isTrue();
		// two windows later: 200 counted
		assertThat(this.script.check(T0, new long[] { 0 }, "g", this.fixed).allowed()).isTrue();
		assertThat(this.script.settle(T0, new long[] { 2_200 }, "g", this.fixed)).containsExactly(2_200);
		Result two = this.script.check(T0 + 2 * MINUTE + 5 * SECOND, new long[] { 0 }, "g", this.fixed);
		assertThat(two.remaining(0)).isEqualTo(800);
		// a give-back during the debt takes from what is still counted, and says so
		assertThat(this.script.settle(T0 + 2 * MINUTE, new long[] { -300 }, "g", this.fixed)).containsExactly(-200);
		assertThat(this.script.check(T0 + 2 * MINUTE, new long[] { 1_000 }, "g", this.fixed).allowed()).isTrue();
	}

	@Test
	void aSlidingWindowCounterCarriesTheExcessAndWeighsAtMostTheCapacity() {
		assertThat(this.script.check(T0, new long[] { 600 }, "s", this.sliding).allowed()).isTrue();
		// 2,500 counted in window 0: window 1 counts 1,500 (and 1,000 weighing), window 2 counts 500 (1,000 weighing)
		assertThat(this.script.settle(T0, new long[] { 1_900 }, "s", this.sliding)).containsExactly(1_900);
		Result denied = this.script.check(T0, new long[] { 100 }, "s", this.sliding);
		assertThat(denied.allowed()).isFalse();
		// room for 100 once 500 + round(1,000 x weight) <= 900: 35.970001 s into window 2
		assertThat(denied.retryAfterMs(0)).isEqualTo(2 * 60_000 + 35_971);
		long retry = T0 + denied.retryAfterMs(0) * 1000;
		assertThat(this.script.check(retry - 1000, new long[] { 100 }, "s", this.sliding).allowed()).isFalse();
		// the estimate is continuous at the edges: all 2,500 just before and just after window 1 starts
		assertThat(this.script.check(T0 + MINUTE + 30 * SECOND, new long[] { 0 }, "s", this.sliding).remaining(0))
			.isZero();
		// the last 500 no longer weigh 59.94 s into window 3: the key lives that long
		assertThat(this.script.ttlMillis("s", 0)).isEqualTo(3 * 60_000 + 59_941);
		assertThat(denied.resetMs(0)).isEqualTo(3 * 60_000 + 59_941);
		assertThat(this.script.check(retry, new long[] { 100 }, "s", this.sliding).allowed()).isTrue();
		assertThat(this.script.redis().command("HGET", "s:0", "d")).isEqualTo("0");
	}

	@Test
	void aSlidingWindowCounterDebtIsWaitedOffAsIfTheExcessHadBeenAdmittedInTheNextWindow() {
		// a greedy client taking 10 units whenever it can, once a second, from window 1 to window 5
		assertThat(this.script.check(T0, new long[] { 1_000 }, "honest", this.sliding).allowed()).isTrue();
		assertThat(this.script.check(T0, new long[] { 1_000 }, "debtor", this.sliding).allowed()).isTrue();
		assertThat(this.script.settle(T0, new long[] { 1_500 }, "debtor", this.sliding)).containsExactly(1_500);
		long honest = greedily("honest", this.sliding, T0 + MINUTE, T0 + 5 * MINUTE);
		long debtor = greedily("debtor", this.sliding, T0 + MINUTE, T0 + 5 * MINUTE);
		assertThat(honest).isBetween(3_900L, 4_100L);
		// the debtor waits off its 1,500 units (to the rounding of one window's weight)
		assertThat((double) (honest - debtor)).isCloseTo(1_500, within(30.0));
	}

	@Test
	void aQuotaCarriesTheExcessIntoTheNextPeriodsUntilRepaid() {
		long day0 = T0 + 10 * 3_600 * SECOND; // 10:00 UTC
		assertThat(this.script.check(day0, new long[] { 600 }, "q", quota(1_000, day0)).allowed()).isTrue();
		assertThat(this.script.settle(day0, new long[] { 2_900 }, "q", quota(1_000, day0))).containsExactly(2_900);
		// 3,500 used: 2,500 carried into day 1, 1,500 into day 2, 500 into day 3; the key lives past the end of day 3
		assertThat(this.script.ttlMillis("q", 0)).isBetween((4 * DAY - 10 * 3_600 * SECOND) / 1000,
				(4 * DAY - 10 * 3_600 * SECOND) / 1000 + 6 * 3_600_000L);
		Result denied = this.script.check(day0, new long[] { 1 }, "q", quota(1_000, day0));
		assertThat(denied.allowed()).isFalse();
		long retry = day0 + denied.retryAfterMs(0) * 1000;
		assertThat(retry).isEqualTo(T0 + 3 * DAY); // day 3 starts with 500 counted: exact
		assertThat(this.script.check(retry - 1000, new long[] { 1 }, "q", quota(1_000, retry - 1000)).allowed())
			.isFalse();
		assertThat(used(T0 + DAY + SECOND)).isEqualTo(2_500);
		assertThat(used(T0 + 2 * DAY + SECOND)).isEqualTo(1_500);
		assertThat(used(T0 + 3 * DAY + SECOND)).isEqualTo(500);
		assertThat(used(T0 + 4 * DAY + SECOND)).isZero();
		Result dayThree = this.script.check(retry, new long[] { 500 }, "q", quota(1_000, retry));
		assertThat(dayThree.allowed()).isTrue();
		assertThat(dayThree.remaining(0)).isZero();
		assertThat(this.script.check(retry, new long[] { 1 }, "q", quota(1_000, retry)).allowed()).isFalse();
		assertThat(this.script.check(T0 + 4 * DAY, new long[] { 1_000 }, "q", quota(1_000, T0 + 4 * DAY)).allowed())
			.isTrue();
	}

	@Test
	void aQuotaCarriesTheExcessBeyondItsLimitWithTopUpsCountedAsTheScriptCountsThem() {
		long day0 = T0 + 10 * 3_600 * SECOND;
		assertThat(this.script.check(day0, new long[] { 1_000 }, "q", quota(1_000, day0)).allowed()).isTrue();
		this.script.settle(day0, new long[] { 500 }, "q", quota(1_000, day0));
		// an operator tops the day up by 200: 1,300 of it used, 300 carried into day 1
		assertThat(this.script.topUp(day0, new long[] { 200 }, "q", quota(1_000, day0))).isEqualTo(200);
		assertThat(used(T0 + DAY + SECOND)).isEqualTo(300);
		// a top-up on day 1 counts against the carried use
		assertThat(this.script.topUp(T0 + DAY, new long[] { 100 }, "q", quota(1_000, T0 + DAY))).isEqualTo(100);
		assertThat(used(T0 + DAY + SECOND)).isEqualTo(200);
		Result dayOne = this.script.check(T0 + DAY, new long[] { 800 }, "q", quota(1_000, T0 + DAY));
		assertThat(dayOne.allowed()).isTrue();
		assertThat(dayOne.remaining(0)).isZero();
		assertThat(used(T0 + 2 * DAY)).isZero();
	}

	@Test
	void limitsCountingRequestsKeepTheirStateAndCarryNothing() {
		Limit fixedRequests = Limit.window("fw", 10, MINUTE);
		Limit slidingRequests = Limit.window("swc", 10, MINUTE);
		assertThat(this.script.drain(T0, "f", fixedRequests)).isEqualTo(10);
		assertThat(this.script.drain(T0, "s", slidingRequests)).isEqualTo(10);
		assertThat(this.script.check(T0, new long[] { 5 }, "q", quota(5, T0)).allowed()).isTrue();
		assertThat(this.script.redis().command("HKEYS", "f:0")).isEqualTo("w\nc");
		assertThat(this.script.redis().command("HKEYS", "s:0")).isEqualTo("w\nc\np");
		assertThat(this.script.redis().command("HKEYS", "q:0")).isEqualTo("p\nc");
		assertThat(this.script.ttlMillis("f", 0)).isEqualTo(60_000);
		assertThat(this.script.ttlMillis("q", 0)).isEqualTo(86_400_000);
		// a limit lowered at runtime below what was counted carries nothing into the next window
		assertThat(this.script.check(T0 + MINUTE, 5, "f", fixedRequests.with(5, MINUTE)).allowed()).isTrue();
		assertThat(this.script.check(T0 + 2 * MINUTE, 5, "s", slidingRequests.with(5, MINUTE)).allowed()).isTrue();
		assertThat(this.script.check(T0 + DAY, new long[] { 2 }, "q", quota(2, T0 + DAY)).allowed()).isTrue();
	}

	/** Units a client admitted 10 at a time, as many as fit, once a second from {@code from} until {@code to}. */
	private long greedily(String key, Limit limit, long from, long to) {
		long admitted = 0;
		for (long t = from; t < to; t += SECOND) {
			int taken = 0;
			while (taken < 100 && this.script.check(t, new long[] { 10 }, key, limit).allowed()) {
				taken++;
			}
			admitted += 10L * taken;
		}
		return admitted;
	}

	/** The quota's use in the period of a time ({@code quota}), boundaries sent from that time. */
	private long used(long timeMicros) {
		return this.script.quotas(timeMicros, "q", quota(1_000, timeMicros))[0];
	}

	private Limit quota(long limit, long gatewayMicros) {
		Instant gatewayNow = Instant.ofEpochSecond(gatewayMicros / SECOND, (gatewayMicros % SECOND) * 1_000);
		List<Instant> boundaries = this.days.boundariesAround(gatewayNow, 4);
		return Limit.quota(limit,
				boundaries.stream().mapToLong((b) -> b.getEpochSecond() * SECOND + b.getNano() / 1_000).toArray());
	}

}
