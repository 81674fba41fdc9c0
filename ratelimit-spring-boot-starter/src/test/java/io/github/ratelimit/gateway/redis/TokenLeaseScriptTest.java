package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Leased;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.MINUTE;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.NO_LEASE;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.SECOND;
import static io.github.ratelimit.gateway.redis.ScriptAtTime.T0;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The script's token leases ({@code lease} operation) at simulated Redis times: what a lease takes, how it shrinks
 * near an empty bucket, the reservation that keeps the bucket from refilling past unspent leased tokens, the return of
 * a lease, and the rule it all serves: no interval admits more than capacity + refill over it, whatever the leases.
 */
class TokenLeaseScriptTest {

	private static final Limit TEN_PER_TEN_SECONDS = Limit.tokenBucket(10, 1, SECOND);

	@RegisterExtension
	final ScriptAtTime script = new ScriptAtTime();

	@Test
	void aLeaseIsTakenWithTheRequestAndIsAtMostHalfOfWhatRemains() {
		Leased lease = this.script.lease(T0, 1, 100, 10 * SECOND, NO_LEASE, "b", TEN_PER_TEN_SECONDS);
		assertThat(lease.check().allowed()).isTrue();
		// 9 left after the request: half, rounded down
		assertThat(lease.tokens()).isEqualTo(4);
		assertThat(lease.endMicros()).isEqualTo(T0 + 10 * SECOND);
		// remaining is what the bucket holds without the leased tokens
		assertThat(lease.check().remaining(0)).isEqualTo(5);
		// full again once the reservation has ended (10 s) and its 4 tokens have refilled (4 s)
		assertThat(lease.check().resetMs(0)).isEqualTo(14_000);
	}

	@Test
	void leasesShrinkToNothingAsTheBucketNearsEmpty() {
		List<Long> granted = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			Leased lease = this.script.lease(T0, 1, 100, 10 * SECOND, NO_LEASE, "b",
					Limit.tokenBucket(10, 1, 60 * SECOND));
			granted.add(lease.tokens());
		}
		// 10, less 1 for the request: 9, lease 4 -> 5; 4, lease 2 -> 2; then 1 and 0: no lease; then denied
		assertThat(granted).containsExactly(4L, 2L, 0L, 0L, 0L, 0L);
		Leased denied = this.script.lease(T0, 1, 100, 10 * SECOND, NO_LEASE, "b",
				Limit.tokenBucket(10, 1, 60 * SECOND));
		assertThat(denied.check().allowed()).isFalse();
		assertThat(denied.tokens()).isZero();
		assertThat(denied.endMicros()).isZero();
		// the denial's Retry-After is exact: one token's refill (the reservations end long before)
		assertThat(denied.check().retryAfterMs(0)).isEqualTo(60_000);
	}

	@Test
	void whileALeaseIsOutTheBucketNeverRefillsPastItsTokens() {
		Leased lease = this.script.lease(T0, 1, 4, 10 * SECOND, NO_LEASE, "b", TEN_PER_TEN_SECONDS);
		assertThat(lease.tokens()).isEqualTo(4);
		// 5 s later the bucket alone would be full again (10); the 4 leased tokens are still out: at most 6
		Result later = this.script.check(T0 + 5 * SECOND, 7, "b", TEN_PER_TEN_SECONDS);
		assertThat(later.allowed()).isFalse();
		assertThat(later.remaining(0)).isEqualTo(6);
		// the room comes back when the lease ends
		assertThat(later.retryAfterMs(0)).isEqualTo(6_000);
		assertThat(this.script.check(T0 + 5 * SECOND, 6, "b", TEN_PER_TEN_SECONDS).allowed()).isTrue();
	}

	@Test
	void aReturnedLeaseGivesBackItsUnspentTokensAndItsReservation() {
		Leased lease = this.script.lease(T0, 1, 4, 10 * SECOND, NO_LEASE, "b", TEN_PER_TEN_SECONDS);
		// 1 of the 4 spent; returned 1 s later with a request of its own and no new lease
		Leased next = this.script.lease(T0 + SECOND, 1, 0, 10 * SECOND, lease.returned(3), "b",
				TEN_PER_TEN_SECONDS);
		assertThat(next.check().allowed()).isTrue();
		assertThat(next.tokens()).isZero();
		// used: 1 + 1 spent of the lease + 1 now = 3, less 1 s of refill = 2; nothing reserved any more
		assertThat(next.check().remaining(0)).isEqualTo(8);
		assertThat(next.check().resetMs(0)).isEqualTo(2_000);
	}

	@Test
	void aLeaseThatEndsWithoutReturnCountsAsSpentAtItsEnd() {
		Leased lease = this.script.lease(T0, 1, 4, 2 * SECOND, NO_LEASE, "b", TEN_PER_TEN_SECONDS);
		assertThat(lease.tokens()).isEqualTo(4);
		// until 2 s the bucket holds at most 10 - 4 (the request's own token has refilled by then); at 2 s the 4
		// leased tokens count as spent, and refill from there: at 2.5 s, 6.5 tokens, 5.5 after this request
		Result later = this.script.check(T0 + 2_500_000, 1, "b", TEN_PER_TEN_SECONDS);
		assertThat(later.allowed()).isTrue();
		assertThat(later.remaining(0)).isEqualTo(5);
	}

	@Test
	void aLateReturnOfAnEndedLeaseNeverReleasesAnotherLeasesReservation() {
		Leased first = this.script.lease(T0, 1, 4, SECOND, NO_LEASE, "b", TEN_PER_TEN_SECONDS);
		assertThat(first.tokens()).isEqualTo(4);
		// after the first lease ended (1 s), another instance takes one: 2 tokens
		Leased second = this.script.lease(T0 + 3 * SECOND, 1, 2, 10 * SECOND, NO_LEASE, "b",
				TEN_PER_TEN_SECONDS);
		assertThat(second.tokens()).isEqualTo(2);
		// the first instance's return arrives late: nothing comes back (its reservation is long gone, its tokens
		// counted as spent at its end), and the second lease's reservation stays: the bucket holds at most 10 - 2
		this.script.lease(T0 + 4 * SECOND, 0, 0, SECOND, first.returned(4), "b", TEN_PER_TEN_SECONDS);
		Result during = this.script.check(T0 + 9 * SECOND, 9, "b", TEN_PER_TEN_SECONDS);
		assertThat(during.allowed()).isFalse();
		assertThat(during.remaining(0)).isEqualTo(8);
		// and once the second lease has ended too, the bucket fills
		Result read = this.script.check(T0 + 30 * SECOND, 0, "b", TEN_PER_TEN_SECONDS);
		assertThat(read.remaining(0)).isEqualTo(10);
	}

	@Test
	void aLateReturnWhileAnotherLeaseIsOutGivesNothingBackAndLeavesTheReservation() {
		// lease A (1 s) at 0; lease B (1 s) at 0.5 s by another instance; A's return arrives at 1.25 s, after its end,
		// while B still holds the reservation: A's 3 unspent tokens do not come back (they could not be spent after
		// A's end), and A's 4 tokens leave the reservation
		Limit slow = Limit.tokenBucket(100, 1, 60 * SECOND);
		Leased a = this.script.lease(T0, 1, 4, SECOND, NO_LEASE, "b", slow);
		assertThat(a.tokens()).isEqualTo(4);
		Leased b = this.script.lease(T0 + SECOND / 2, 1, 4, SECOND, NO_LEASE, "b", slow);
		assertThat(b.tokens()).isEqualTo(4);
		this.script.lease(T0 + 1_250_000, 0, 0, SECOND, a.returned(3), "b", slow);
		// 100 - 2 requests - A's 4 - B's 4 (B's can still come back)
		assertThat(this.script.check(T0 + 1_250_000, 0, "b", slow).remaining(0)).isEqualTo(90);
		// B returns in time (before 1.5 s), all of it unspent
		this.script.lease(T0 + 1_250_001, 0, 0, SECOND, b.returned(4), "b", slow);
		// consumed: the two requests and A's 4 tokens; refill is 1 per minute
		Result later = this.script.check(T0 + 10 * SECOND, 0, "b", slow);
		assertThat(later.remaining(0)).isEqualTo(94);
	}

	@Test
	void aReturnAfterTheReservationEndedGivesNothingBack() {
		Limit slow = Limit.tokenBucket(100, 1, 60 * SECOND);
		Leased a = this.script.lease(T0, 1, 4, SECOND, NO_LEASE, "b", slow);
		// the reservation ends at 1 s: read at 2 s (its 4 tokens count as spent at 1 s); a new lease starts another
		assertThat(this.script.check(T0 + 2 * SECOND, 0, "b", slow).remaining(0)).isEqualTo(95);
		Leased b = this.script.lease(T0 + 2 * SECOND, 1, 4, 10 * SECOND, NO_LEASE, "b", slow);
		assertThat(b.tokens()).isEqualTo(4);
		// A's late return: nothing back, B's reservation untouched: used are A's request and its 4 leased tokens, B's
		// request and its 4 leased ones (10, less 3 s of refill at 1 per minute)
		this.script.lease(T0 + 3 * SECOND, 0, 0, SECOND, a.returned(2), "b", slow);
		Result during = this.script.check(T0 + 3 * SECOND, 0, "b", slow);
		assertThat(during.remaining(0)).isEqualTo(90);
		// and once B gives its 4 back unspent, while it runs, they are there
		this.script.lease(T0 + 4 * SECOND, 0, 0, 10 * SECOND, b.returned(4), "b", slow);
		assertThat(this.script.check(T0 + 4 * SECOND, 0, "b", slow).remaining(0)).isEqualTo(94);
	}

	@Test
	void noIntervalAdmitsMoreThanCapacityPlusRefillWhateverTheLeases() {
		// three instances, each leasing greedily and spending locally until its lease ends, returning what is left
		// with its next lease call; random arrivals. Every admission (from Redis or from a lease) is recorded.
		Limit limit = Limit.tokenBucket(20, 10, SECOND);
		Random random = new Random(42);
		int instances = 3;
		long[][] leases = new long[instances][];
		long[] left = new long[instances];
		for (int i = 0; i < instances; i++) {
			leases[i] = NO_LEASE;
		}
		List<Long> admitted = new ArrayList<>();
		long t = T0;
		for (int n = 0; n < 1_500; n++) {
			t += random.nextInt(40_000); // about 50 requests per second offered, 10 per second allowed
			int i = random.nextInt(instances);
			if (left[i] > 0 && t < leases[i][2]) {
				left[i]--;
				admitted.add(t);
				continue;
			}
			long[] previous = (leases[i] == NO_LEASE) ? NO_LEASE
					: new long[] { leases[i][0], left[i], leases[i][2] };
			Leased lease = this.script.lease(t, 1, 1 + random.nextInt(8), 1 + random.nextInt(2 * (int) SECOND),
					previous, "b", limit);
			leases[i] = (lease.tokens() > 0) ? new long[] { lease.tokens(), 0, lease.endMicros() } : NO_LEASE;
			left[i] = lease.tokens();
			if (lease.check().allowed()) {
				admitted.add(t);
			}
		}
		assertThat(admitted.size()).as("the bucket was kept busy").isGreaterThan(150);
		for (int a = 0; a < admitted.size(); a++) {
			for (int b = a; b < admitted.size(); b++) {
				double bound = 20 + 10 * (admitted.get(b) - admitted.get(a)) / (double) SECOND;
				assertThat((double) (b - a + 1)).as("admitted between %d and %d us", admitted.get(a) - T0,
						admitted.get(b) - T0).isLessThanOrEqualTo(bound + 1e-6);
			}
		}
	}


	@Test
	void lateReturnsWhileAnotherInstanceDrainsNeverAdmitMoreThanTheBound() {
		// 50 tokens at 10 per second, leases of up to 25 (lease: 50%)
		interleavings(3, 25, Limit.tokenBucket(50, 10, SECOND));
	}

	@Test
	void lateReturnsWhileAnotherInstanceDrainsNeverAdmitMoreThanTheBoundOfEitherLimit() {
		// 40 at 20 per second plus 100 per minute, leases of up to 20 (the first limit's 50%)
		interleavings(6, 20, Limit.tokenBucket(40, 20, SECOND), Limit.tokenBucket(100, 100, MINUTE));
	}

	/**
	 * Three instances of one client, calls arriving late (returns after their lease ended), now and then a drain:
	 * see {@link LeaseInterleavings} for the two rules checked. Seeds 1 to {@code seeds} (the script before issue 27
	 * failed seed 1 of one limit and seeds 5 and 6 of two); the system property {@code leases.seeds} runs more.
	 */
	private void interleavings(int seeds, int budget, Limit... limits) {
		int lateReturns = 0;
		for (long seed = 1; seed <= Long.getLong("leases.seeds", seeds); seed++) {
			LeaseInterleavings run = new LeaseInterleavings(this.script, "b" + seed, seed, 3, limits);
			run.run(600, T0, budget);
			run.checkIntervals();
			assertThat(run.admitted()).as("the bucket was kept busy").isGreaterThan(100);
			lateReturns += run.lateReturns();
		}
		assertThat(lateReturns).as("returns that arrived after their lease ended").isGreaterThan(10);
	}

	@Test
	void aLeaseGivenBackAfterItsEndWhileAnotherInstanceDrainsGivesNothingBack() {
		// the attack of issue 27: 50 at 10 per second, leases of up to 25 (lease: 50%); today 41 against 53 (60 before)
		attack(Limit.tokenBucket(50, 10, SECOND));
	}

	@Test
	void aLeaseGivenBackAfterItsEndWhileAnotherInstanceDrainsGivesNothingBackInEitherLimit() {
		// 40 at 20 per second plus 100 per minute: today 41 against 46 (60 before)
		attack(Limit.tokenBucket(40, 20, SECOND), Limit.tokenBucket(100, 100, MINUTE));
	}

	/**
	 * Lease duration 1 s. Instance A: a first request, then one that takes a lease of 19, never spent; 1.75 s in,
	 * instance B takes everything Redis admits; 2.05 s in, two lease durations after A's last request, A's slot is
	 * dropped and its lease goes back unspent, and B takes everything Redis admits again.
	 */
	private void attack(Limit... limits) {
		assertThat(this.script.check(T0, 1, "b", limits).allowed()).isTrue();
		Leased a = this.script.lease(T0 + 50_000, 1, 19, SECOND, NO_LEASE, "b", limits);
		assertThat(a.tokens()).isEqualTo(19);
		long drainedAt = T0 + 1_750_000;
		long admitted = this.script.drain(drainedAt, "b", limits);
		long returnedAt = T0 + 2_050_000;
		this.script.lease(returnedAt, 0, 0, SECOND, a.returned(19), "b", limits);
		admitted += this.script.drain(returnedAt, "b", limits);
		for (Limit limit : limits) {
			double bound = limit.capacity()
					+ (double) limit.refillTokens() * (returnedAt - drainedAt) / limit.periodMicros();
			assertThat((double) admitted).as("admitted between 1.75 s and 2.05 s, %s", limit)
				.isLessThanOrEqualTo(bound);
		}
		// what B took at 2.05 s is only the refill since 1.75 s
		assertThat(admitted).isEqualTo(41);
	}

}
