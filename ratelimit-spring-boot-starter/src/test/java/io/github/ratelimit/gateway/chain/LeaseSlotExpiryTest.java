package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.github.benmanes.caffeine.cache.Scheduler;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When {@link LeasingRateLimiter} drops a client's slot (and sends its lease back): after two lease durations without
 * a request for that client on the instance, however long ago the slot was made. A clock of the test's own (the
 * cache's ticker and the leases' clock) and a store that records the calls: the logic alone, no Redis.
 */
class LeaseSlotExpiryTest {

	private static final Duration LEASE = Duration.ofSeconds(1);

	private final ClientKey alice = new ClientKey(ClientKey.Kind.API_KEY, "alice", "pro");

	/** 2,000 tokens, leases of up to 5% (100 tokens). */
	private final PlanLimits limits = new PlanLimits("pro", "search", List.of(new LimitDefinition("pro-search", 2_000,
			1, Duration.ofHours(1), Algorithm.TOKEN_BUCKET, LimitScope.CLIENT, new LeaseBudget(5))));

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	private final RecordingStore store = new RecordingStore();

	private final LeasingRateLimiter limiter = new LeasingRateLimiter(this.store, LEASE, 1000, this.nanos::get,
			Scheduler.disabledScheduler());

	@Test
	void aSlotInUseIsKeptLongAfterItWasMade() {
		consume(); // exact, makes the slot
		consume(); // takes a lease
		assertThat(this.store.leases).hasSize(1);
		// eight requests per lease duration (enough for leases) for ten durations: the slot stays, each lease goes
		// back with the next
		for (int i = 0; i < 80; i++) {
			advance(LEASE.dividedBy(8));
			consume();
			assertThat(this.limiter.size()).as("after %d eighths of a duration", i + 1).isOne();
		}
		// a slot made again would have sent its first request to the store as an exact check
		assertThat(this.store.exactChecks).as("exact checks (the first request of a slot)").hasValue(1);
	}

	@Test
	void aSlotIsDroppedAfterTwoLeaseDurationsWithoutARequest() {
		// eight requests per lease duration (enough for leases) for over two durations; the cache records a request's
		// time only when over a second has passed since the time it holds (Caffeine's expiry tolerance), so the last
		// request comes at a recorded time: the 19th, 2.25 s after the first (the 10th, at 1.125 s, was recorded)
		for (int i = 0; i < 19; i++) {
			consume();
			advance(LEASE.dividedBy(8));
		}
		assertThat(this.store.leases).as("leases taken").isNotEmpty();
		long lastRequest = this.nanos.get() - LEASE.dividedBy(8).toNanos();
		// just before two durations of idleness: still there
		this.nanos.set(lastRequest + 2 * LEASE.toNanos() - 1);
		this.limiter.cleanUpSlots();
		assertThat(this.limiter.size()).isOne();
		assertThat(this.store.returnsAlone()).isZero();
		// two durations after the last request: dropped, and its lease sent back on its own
		this.nanos.set(lastRequest + 2 * LEASE.toNanos());
		this.limiter.cleanUpSlots();
		assertThat(this.limiter.size()).isZero();
		// the cache tells its removal listener on another thread
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.store.returnsAlone() == 1);
	}

	@Test
	void aLeaseSpentToTheLastTokenIsSentBackWhenItsSlotIsDropped() {
		consume(); // exact, makes the slot
		consume(); // takes a lease
		assertThat(this.store.leases).hasSize(1);
		long granted = this.store.leases.get(0)[1];
		assertThat(granted).isPositive();
		for (long i = 0; i < granted; i++) {
			consume(); // from the lease
		}
		assertThat(this.store.leases).as("spent from the lease").hasSize(1);
		advance(LEASE.multipliedBy(2));
		this.limiter.cleanUpSlots();
		assertThat(this.limiter.size()).isZero();
		// nothing unspent, but its reservation is released
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.store.returnsAlone() == 1);
		assertThat(this.store.leases.get(1)).containsExactly(0, 0, granted, 0);
	}

	@Test
	void aLeaseTakenBeforeARefreshGoesBackUnderTheNewLimits() {
		PlanLimits raised = new PlanLimits("pro", "search", List.of(new LimitDefinition("pro-search", 20_000, 1,
				Duration.ofHours(1), Algorithm.TOKEN_BUCKET, LimitScope.CLIENT, new LeaseBudget(5))));
		consume(); // exact, makes the slot
		consume(); // takes a lease
		assertThat(this.limiter.tryConsume(this.alice, raised, 1).orTimeout(10, TimeUnit.SECONDS).join().allowed())
			.isTrue();
		assertThat(this.store.returnsAlone()).isOne();
		assertThat(this.store.leaseLimits.get(1)).as("the limits of the return").isSameAs(raised);
	}

	private void consume() {
		assertThat(this.limiter.tryConsume(this.alice, this.limits, 1).orTimeout(10, TimeUnit.SECONDS).join().allowed())
			.isTrue();
	}

	private void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

	/** Allows everything; grants what a lease asks for; counts the exact checks and records the lease calls. */
	private final class RecordingStore implements RateLimitStore, LeaseStore {

		final List<long[]> leases = new ArrayList<>();

		final List<PlanLimits> leaseLimits = new ArrayList<>();

		final AtomicLong exactChecks = new AtomicLong();

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
			this.exactChecks.incrementAndGet();
			return CompletableFuture.completedFuture(decision(limits));
		}

		@Override
		public synchronized CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
				long durationMicros, ReturnedLease previous) {
			this.leases.add(new long[] { cost, wanted, previous.granted(), previous.unused() });
			this.leaseLimits.add(limits);
			long end = (LeaseSlotExpiryTest.this.nanos.get() / 1000) + durationMicros;
			return CompletableFuture.completedFuture(new Lease(decision(limits), wanted, (wanted > 0) ? end : 0));
		}

		/** Lease calls that only gave a lease back (cost 0, nothing wanted). */
		synchronized long returnsAlone() {
			return this.leases.stream().filter((call) -> call[0] == 0 && call[1] == 0).count();
		}

		private RateLimitDecision decision(PlanLimits limits) {
			LimitDefinition limit = limits.limits().get(0);
			return RateLimitDecision.shared(limits, true, List.of(new LimitStatus(limit, true, 1_000, 0, 0)));
		}

	}

}
