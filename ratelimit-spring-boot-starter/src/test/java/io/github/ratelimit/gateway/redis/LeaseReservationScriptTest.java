package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Leased;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.NO_LEASE;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease's reservation in the script, at simulated Redis times: released by the lease's return even when the lease
 * was spent to the last token while other instances keep leasing, kept (until the last lease ends) when the lease
 * never comes back, and never a source of tokens when the limits change while the lease is out.
 */
class LeaseReservationScriptTest {

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	/**
	 * Instance A takes a lease of 19 and spends it all; its slot is dropped two lease durations later and the lease
	 * goes back with nothing unspent. Instance B keeps leasing every 0.5 s (1 s leases, each given back fully spent
	 * with the next call). Once B drops its last lease, no lease runs: the bucket refills to its capacity.
	 */
	@Test
	void aLeaseSpentToTheLastTokenAndGivenBackReleasesItsReservationWhileAnotherInstanceKeepsLeasing() {
		Limit limit = Limit.tokenBucket(50, 10, SECOND);
		long[] b = aLeasesThenBKeepsLeasing(limit, true);
		assertThat(this.script.check(b[0] + 300_000, 0, "b", limit).remaining(0)).as("no lease runs").isEqualTo(50);
	}

	/**
	 * The limit of what the script can know: a lease that never comes back (its instance died) stays in the
	 * reservation as long as other leases of the bucket keep it running, and counts as spent at the end of the last.
	 */
	@Test
	void aLeaseNeverGivenBackStaysReservedUntilTheLastLeaseEnds() {
		Limit limit = Limit.tokenBucket(50, 10, SECOND);
		long[] b = aLeasesThenBKeepsLeasing(limit, false);
		assertThat(this.script.check(b[0] + 300_000, 0, "b", limit).remaining(0)).as("A's 19 tokens still reserved")
			.isEqualTo(31);
		// counted as spent at the last lease's end, then refilled at 10 per second
		assertThat(this.script.check(b[1] + 19 * SECOND / 10, 0, "b", limit).remaining(0)).isEqualTo(50);
	}

	/**
	 * Instance A takes a lease of 19 (1 s) at 0.05 s and spends it all. Instance B leases every 0.5 s from 0.5 s on,
	 * 120 times (1 s leases of 2 with a request each, each lease given back fully spent with the next call), then
	 * drops its last lease.
	 * @param aGivenBack whether A's slot is dropped at 2.25 s (two lease durations after its last request), its lease
	 * given back fully spent; else A's lease never comes back
	 * @return the time B dropped its last lease, and the end of B's last lease (Redis time, microseconds)
	 */
	private long[] aLeasesThenBKeepsLeasing(Limit limit, boolean aGivenBack) {
		Leased a = this.script.lease(T0 + 50_000, 1, 19, SECOND, NO_LEASE, "b", limit);
		assertThat(a.tokens()).isEqualTo(19);
		long[] previous = NO_LEASE;
		long t = T0 + 500_000;
		long lastEnd = 0;
		for (int i = 0; i < 120; i++, t += 500_000) {
			if (i == 4 && aGivenBack) {
				// A's lease (ended at 1.05 s) given back spent
				this.script.lease(t - 250_000, 0, 0, SECOND, a.returned(0), "b", limit);
			}
			Leased b = this.script.lease(t, 1, 2, SECOND, previous, "b", limit);
			previous = (b.tokens() > 0) ? b.returned(0) : NO_LEASE;
			lastEnd = Math.max(lastEnd, b.endMicros());
		}
		this.script.lease(t, 0, 0, SECOND, previous, "b", limit);
		return new long[] { t, lastEnd };
	}

	/**
	 * The capacity is raised from 10 to 100 (same refill, 1 per second) while instance A holds a lease of 4 taken
	 * under the old limits. Instance B, on the new limits, drains the bucket; A sees the client's first request after
	 * its refresh and gives its lease back under the new limits; B drains again. Bound over 0.3 s: 100 + 0.3.
	 */
	@Test
	void aLeaseGivenBackUnderTheNewLimitsAfterACapacityRiseNeverAdmitsMoreThanTheNewBound() {
		Limit before = Limit.tokenBucket(10, 1, SECOND);
		Limit after = Limit.tokenBucket(100, 1, SECOND);
		Leased a = this.script.lease(T0, 1, 4, SECOND, NO_LEASE, "b", before);
		assertThat(a.tokens()).isEqualTo(4);
		int firstDrain = this.script.drain(T0 + 100_000, "b", after);
		this.script.lease(T0 + 200_000, 0, 0, SECOND, a.returned(4), "b", after);
		int secondDrain = this.script.drain(T0 + 300_000, "b", after);
		assertThat(secondDrain).as("A's unspent tokens came back").isGreaterThanOrEqualTo(4);
		assertThat(1 + firstDrain + secondDrain).as("admitted in 0.3 s").isLessThanOrEqualTo(100);
	}

	/**
	 * The same, with the lease given back under the limits before the raise (a stale instance): the bucket, stored
	 * under the new limits, reads beyond empty under the old ones; the return leaves it as stored (it made 90 tokens).
	 */
	@Test
	void aLeaseGivenBackUnderTheLimitsBeforeACapacityRiseLeavesTheBucketAsStored() {
		Limit before = Limit.tokenBucket(10, 1, SECOND);
		Limit after = Limit.tokenBucket(100, 1, SECOND);
		Leased a = this.script.lease(T0, 1, 4, SECOND, NO_LEASE, "b", before);
		int firstDrain = this.script.drain(T0 + 100_000, "b", after);
		this.script.lease(T0 + 200_000, 0, 0, SECOND, a.returned(4), "b", before);
		int secondDrain = this.script.drain(T0 + 300_000, "b", after);
		assertThat(1 + firstDrain + secondDrain).as("admitted in 0.3 s (first drain %d)", firstDrain)
			.isLessThanOrEqualTo(100);
	}

	/** A read (cost 0) under the limits before a capacity rise never stores the old capacity's clamp. */
	@Test
	void aReadUnderTheLimitsBeforeACapacityRiseLeavesTheBucketAsStored() {
		Limit before = Limit.tokenBucket(10, 1, SECOND);
		Limit after = Limit.tokenBucket(100, 1, SECOND);
		int firstDrain = this.script.drain(T0, "b", after);
		assertThat(this.script.check(T0 + 100_000, 0, "b", before).remaining(0)).isZero();
		int secondDrain = this.script.drain(T0 + 200_000, "b", after);
		assertThat(firstDrain + secondDrain).as("admitted in 0.2 s").isLessThanOrEqualTo(100);
	}

}
