package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.MINUTE;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The script's per-limit costs and its {@code settle} operation, at simulated Redis times ({@link ScriptAtTime}): a
 * request takes 1 from a limit counting requests and its reservation from one counting usage in one call, all or
 * nothing; once its answer is over the difference goes back or is charged, a token bucket owing all of it, and the
 * reply tells per limit what was taken or given back (the windows' and quotas' debt: {@link WindowDebtScriptTest}).
 */
class SettleScriptTest {

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	/** 1,000 usage units per minute (one every 60 ms). */
	private final Limit tokens = Limit.tokenBucket(1_000, 1_000, MINUTE);

	/** 10 requests per minute. */
	private final Limit requests = Limit.tokenBucket(10, 10, MINUTE);

	@Test
	void eachLimitTakesItsOwnCostAllOrNothing() {
		Result first = this.script.check(T0, new long[] { 1, 600 }, "k", this.requests, this.tokens);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining(0)).isEqualTo(9);
		assertThat(first.remaining(1)).isEqualTo(400);
		Result second = this.script.check(T0, new long[] { 1, 600 }, "k", this.requests, this.tokens);
		assertThat(second.allowed()).isFalse();
		assertThat(second.satisfied(0)).isTrue();
		assertThat(second.satisfied(1)).isFalse();
		assertThat(second.remaining(0)).isEqualTo(9); // the denial took nothing from the request limit
		// 200 more units are needed: 200 * 60 ms
		assertThat(second.retryAfterMs(1)).isEqualTo(12_000);
	}

	@Test
	void unusedUnitsGoBackAtOnce() {
		assertThat(this.script.check(T0, new long[] { 1, 600 }, "k", this.requests, this.tokens).allowed()).isTrue();
		// the answer used 100 of the 600 reserved: 500 back, the request limit left alone
		assertThat(this.script.settle(T0 + SECOND, new long[] { 0, -500 }, "k", this.requests, this.tokens))
			.containsExactly(0, -500);
		Result after = this.script.check(T0 + SECOND, new long[] { 0, 0 }, "k", this.requests, this.tokens);
		assertThat(after.remaining(0)).isEqualTo(9);
		// 1,000 - 100 used, + 16 refilled in the second (one unit per 60 ms)
		assertThat(after.remaining(1)).isEqualTo(916);
	}

	@Test
	void excessTakesTheBucketBelowZeroAndTheNextRequestWaitsItOutExactly() {
		assertThat(this.script.check(T0, new long[] { 1, 600 }, "k", this.requests, this.tokens).allowed()).isTrue();
		// the answer used 1,300: 700 more than reserved, the bucket owes 300
		assertThat(this.script.settle(T0, new long[] { 0, 700 }, "k", this.requests, this.tokens))
			.containsExactly(0, 700);
		assertThat(this.script.redis().command("GET", "k:1")).endsWith(":owes");
		Result denied = this.script.check(T0, new long[] { 1, 100 }, "k", this.requests, this.tokens);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.remaining(1)).isZero();
		// 300 owed + 100 wanted = 400 units: 24 s; the bucket is full again after 1,300 units: 78 s
		assertThat(denied.retryAfterMs(1)).isEqualTo(24_000);
		assertThat(denied.resetMs(1)).isEqualTo(78_000);
		assertThat(this.script.ttlMillis("k", 1)).isEqualTo(78_000);
		long retry = T0 + denied.retryAfterMs(1) * 1000;
		assertThat(this.script.check(retry - 1000, new long[] { 1, 100 }, "k", this.requests, this.tokens).allowed())
			.isFalse();
		assertThat(this.script.check(retry, new long[] { 1, 100 }, "k", this.requests, this.tokens).allowed()).isTrue();
	}

	@Test
	void aBucketOwesAllItIsChargedAndKeepsItUntilRepaid() {
		assertThat(this.script.check(T0, new long[] { 1, 1_000 }, "k", this.requests, this.tokens).allowed()).isTrue();
		assertThat(this.script.settle(T0, new long[] { 0, 5_000 }, "k", this.requests, this.tokens))
			.containsExactly(0, 5_000);
		Result denied = this.script.check(T0, new long[] { 0, 1 }, "k", this.requests, this.tokens);
		// owes 5,000: 5,001 units to wait for (60 ms each), full again after 6,000
		assertThat(denied.retryAfterMs(1)).isEqualTo(300_060);
		assertThat(denied.resetMs(1)).isEqualTo(360_000);
		assertThat(this.script.ttlMillis("k", 1)).isEqualTo(360_000);
		long retry = T0 + denied.retryAfterMs(1) * 1000;
		assertThat(this.script.check(retry - 1000, new long[] { 0, 1 }, "k", this.requests, this.tokens).allowed())
			.isFalse();
		assertThat(this.script.check(retry, new long[] { 0, 1 }, "k", this.requests, this.tokens).allowed()).isTrue();
	}

	@Test
	void aDebtRunsAtMostTenYearsAheadAndTheReplyTellsWhatWasTaken() {
		// 1,000 per minute: ten years hold 5,256,000,000 units (one every 60 ms); the bucket was empty
		assertThat(this.script.check(T0, new long[] { 1, 1_000 }, "k", this.requests, this.tokens).allowed()).isTrue();
		long tenYearsOfUnits = 315_360_000_000_000L / 60_000;
		long[] charged = this.script.settle(T0, new long[] { 0, 1L << 53 }, "k", this.requests, this.tokens);
		assertThat(charged[1]).isEqualTo(tenYearsOfUnits - 1_000);
		assertThat(this.script.ttlMillis("k", 1)).isEqualTo(315_360_000_000L);
		// the reply of a give-back: only what the bucket lacked
		assertThat(this.script.settle(T0, new long[] { 0, -300 }, "g", this.requests, this.tokens))
			.containsExactly(0, 0);
	}

	@Test
	void anAnswerThatDoesNotCountGivesEverythingBack() {
		assertThat(this.script.check(T0, new long[] { 1, 600 }, "k", this.requests, this.tokens).allowed()).isTrue();
		assertThat(this.script.settle(T0, new long[] { -1, -600 }, "k", this.requests, this.tokens))
			.containsExactly(-1, -600);
		Result after = this.script.check(T0, new long[] { 0, 0 }, "k", this.requests, this.tokens);
		assertThat(after.remaining(0)).isEqualTo(10);
		assertThat(after.remaining(1)).isEqualTo(1_000);
	}

	@Test
	void aNegativeCostOutsideASettleOrASlotCostedInACheckIsAnErrorBeforeAnyWrite() {
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.check(T0, new long[] { -1 }, "k", this.tokens))
			.withMessageContaining("limit 1 (tb) cannot cost '-1'");
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.check(T0, new long[] { 1 }, "k", Limit.concurrency(3, MINUTE)))
			.withMessageContaining("limit 1 (cc) cannot cost '1'");
		assertThatIllegalStateException()
			.isThrownBy(() -> this.script.settle(T0, new long[] { 1 }, "k", Limit.concurrency(3, MINUTE)))
			.withMessageContaining("cannot cost '1'");
		assertThat(this.script.redis().command("EXISTS", "k:0")).isEqualTo("0");
	}

}
