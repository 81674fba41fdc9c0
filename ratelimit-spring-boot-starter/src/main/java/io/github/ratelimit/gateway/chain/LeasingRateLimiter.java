package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Scheduler;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * Token leases: fewer store calls than requests for clients an instance sees often. The layer of the limiter chain
 * between the {@linkplain ScopedRateLimiter scopes} and the store, for limits that take leases
 * ({@link PlanLimits#leaseTokens()} above 0: every limit a token bucket with a {@code lease} budget); every other
 * check goes straight to the store.
 *
 * <p>How a client's requests are decided on one instance:
 * <ol>
 * <li>The first request asks the store as usual (one exact check), and the instance starts counting the client's
 * requests.</li>
 * <li>A later request that finds no lease asks the store for its own cost plus a lease: as many tokens as the client
 * sent in one lease duration at its recent rate here, at most the budget ({@link PlanLimits#leaseTokens()}), and only
 * when that is at least {@link #MIN_LEASE_TOKENS} (or the whole budget); else it is an exact check. The store grants
 * at most half of what every bucket holds after the request. The same call gives back the previous
 * lease's unspent tokens. While that call is out, the client's other requests are exact checks.</li>
 * <li>While the lease has tokens and has not ended ({@code ratelimit.leases.duration} after the call was sent), the
 * client's requests are allowed from it, without a store call ({@link RateLimitDecision.Source#LEASED}).</li>
 * </ol>
 *
 * <p>A lease's unspent tokens go back with the next lease call for the client, on the client's next request after
 * the limits were refreshed (under the new limits, to the same buckets), when the cache (bounded by
 * {@code ratelimit.leases.max-entries}) evicts the client, and when the instance stops ({@link #stop()}). A lease
 * that ends unspent counts as spent at its end; a client without a request here for two lease durations is dropped
 * from the cache (up to a second earlier: the cache renews a client's idle time at most once a second). A lease whose store call fails ends without return. Denials are never leased.
 *
 * <p>The decision a lease answers reports the buckets as the store held them when the lease was taken, with the
 * lease's unspent tokens as remaining and the time until full shortened by the time since. Why leases never
 * over-admit: {@code src/docs/design/limiter-chain.md}.
 */
public class LeasingRateLimiter implements StoreLayer {

	private static final Logger logger = LoggerFactory.getLogger(LeasingRateLimiter.class);

	/**
	 * Fewest tokens a lease is asked for, or the whole budget when that is smaller: a client whose recent rate here
	 * predicts fewer requests in one lease duration is decided by exact checks.
	 */
	static final long MIN_LEASE_TOKENS = 4;

	/** Longest wait at shutdown for the leases' unspent tokens to go back. */
	private static final Duration RETURN_TIMEOUT = Duration.ofSeconds(2);

	private final StoreLayer store;

	private final long durationNanos;

	private final long durationMicros;

	private final Ticker ticker;

	private final Cache<SlotKey, Slot> slots;

	/**
	 * Wrap a store that can lease.
	 * @param store the store; checks of limits without leases go to it unchanged
	 * @param duration how long a lease may be spent (positive)
	 * @param maxEntries most clients (per endpoint group) whose lease this instance keeps (at least 1)
	 * @param <S> a store that can also lease
	 */
	public <S extends RateLimitStore & LeaseStore> LeasingRateLimiter(S store, Duration duration, long maxEntries) {
		this(store, duration, maxEntries, Ticker.systemTicker(), Scheduler.systemScheduler());
	}

	/**
	 * Wrap a store that can lease, with a clock of one's own (for tests).
	 * @param store the store
	 * @param duration how long a lease may be spent (positive)
	 * @param maxEntries most clients (per endpoint group) whose lease this instance keeps (at least 1)
	 * @param ticker the clock of leases and of the slots' idleness (nanoseconds)
	 * @param scheduler what drops idle slots on time, rather than on the cache's next use
	 * @param <S> a store that can also lease
	 */
	<S extends RateLimitStore & LeaseStore> LeasingRateLimiter(S store, Duration duration, long maxEntries,
			Ticker ticker, Scheduler scheduler) {
		this.store = StoreLayer.of(store);
		this.durationNanos = duration.toNanos();
		this.durationMicros = Math.max(1, duration.toNanos() / 1000);
		this.ticker = ticker;
		this.slots = Caffeine.newBuilder()
			.maximumSize(maxEntries)
			// a slot without a request for two lease durations is dropped (every request reads it, which counts)
			.expireAfterAccess(Duration.ofNanos(2 * this.durationNanos))
			.ticker(ticker)
			.scheduler(scheduler)
			// the cache's upkeep (and so the removal listener) runs on the thread that uses the cache: no other
			// thread is woken per request
			.executor(Runnable::run)
			// evicted (idle, or beyond max-entries): the lease goes back; explicit removals (stop, reset, refreshed
			// limits) end the lease themselves, so that stop() waits for its own returns
			.<SlotKey, Slot>removalListener((key, slot, cause) -> {
				if (key != null && slot != null && cause.wasEvicted()) {
					returnLease(key.client(), slot);
				}
			})
			.build();
	}

	@Override
	public CompletableFuture<RateLimitDecision> tryConsume(@Nullable Deadline deadline, ClientKey client,
			PlanLimits limits, Cost cost) {
		long leaseTokens = limits.leaseTokens(); // 0 when a limit counts usage: those take no lease
		long tokens = cost.tokens();
		if (leaseTokens == 0 || tokens == 0 || tokens > leaseTokens || cost.usage() != 0) {
			return this.store.tryConsume(deadline, client, limits, cost);
		}
		SlotKey key = new SlotKey(client, limits.group());
		long now = this.ticker.read();
		Slot slot = this.slots.get(key, (k) -> new Slot(limits, now));
		if (slot.limits != limits) {
			// the limits were refreshed: the old lease is never spent under the new ones, and goes back under them
			// (under the old ones, the buckets' state written under the new ones would read as beyond full); done
			// without the slot's monitor, which the cache's eviction takes while holding its own lock
			this.slots.asMap().remove(key, slot);
			returnLease(client, slot, limits);
			return tryConsume(deadline, client, limits, cost);
		}
		long wanted;
		LeaseStore.ReturnedLease previous;
		synchronized (slot) {
			slot.seen++;
			RateLimitDecision leased = slot.spend(tokens, now);
			if (leased != null) {
				return CompletableFuture.completedFuture(leased);
			}
			if (slot.taking || slot.first) {
				// a lease call is out, or this is the first request seen: an exact check
				slot.first = false;
				return this.store.tryConsume(deadline, client, limits, cost);
			}
			long atRecentRate = slot.wanted(now, leaseTokens, this.durationNanos);
			wanted = (atRecentRate >= Math.min(MIN_LEASE_TOKENS, leaseTokens)) ? atRecentRate : 0;
			previous = slot.end();
			if (wanted == 0 && previous == LeaseStore.ReturnedLease.NONE) {
				return this.store.tryConsume(deadline, client, limits, cost);
			}
			slot.taking = true;
		}
		return Futures
			.call(() -> this.store.lease(deadline, client, limits, tokens, wanted, this.durationMicros, previous))
			.whenComplete((lease, ex) -> {
				synchronized (slot) {
					slot.taking = false;
					if (ex == null && lease.tokens() > 0) {
						slot.start(lease, now + this.durationNanos, now);
					}
				}
			})
			.thenApply((lease) -> withLeasedTokens(lease.decision(), lease.tokens()));
	}

	/** Passes through: the tokens were taken in the store (by a check or with a lease), so they go back there. */
	@Override
	public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
		return this.store.refund(client, limits, cost);
	}

	/** Drops this instance's lease of the client (its buckets are deleted anyway) and resets them in the store. */
	@Override
	public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
		Slot slot = this.slots.asMap().remove(new SlotKey(client, limits.group()));
		if (slot != null) {
			synchronized (slot) {
				slot.end();
			}
		}
		return this.store.reset(client, limits);
	}

	/**
	 * Ends this instance's lease of a client that changed in the store (through another instance, or through this
	 * one's {@link #reset}), whatever its plan: its unspent tokens go back (to the buckets as they are now: a reset
	 * deleted the ones the lease was taken from), and the client's next request is decided by the store. Never
	 * waits for the store.
	 * @param change the client and group
	 */
	public void forget(ClientChange change) {
		for (var entry : this.slots.asMap().entrySet()) {
			SlotKey key = entry.getKey();
			if (key.group().equals(change.group()) && change.isOf(key.client())
					&& this.slots.asMap().remove(key, entry.getValue())) {
				returnLease(key.client(), entry.getValue());
			}
		}
	}

	/**
	 * Ends every lease of this instance, as {@link #forget(ClientChange)} does one (changes may have been missed):
	 * their unspent tokens go back, without waiting for the store.
	 */
	public void forgetAll() {
		for (var entry : this.slots.asMap().entrySet()) {
			if (this.slots.asMap().remove(entry.getKey(), entry.getValue())) {
				returnLease(entry.getKey().client(), entry.getValue());
			}
		}
	}

	/** Passes through: quotas take no leases. */
	@Override
	public CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
		return this.store.readQuotas(client, limits);
	}

	/** Passes through: quotas take no leases. */
	@Override
	public CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota, long tokens) {
		return this.store.topUp(client, limits, quota, tokens);
	}

	/**
	 * Clients (per endpoint group) this instance holds a lease or a request count for.
	 * @return the number of entries, approximate
	 */
	public long size() {
		return this.slots.estimatedSize();
	}

	/** Drops the slots that have been idle too long now (for tests whose clock does not run). */
	void cleanUpSlots() {
		this.slots.cleanUp();
	}

	/**
	 * Gives back every lease (one store call per lease; the store takes back the unspent tokens of leases that have
	 * not ended, and releases the reservation of each) and waits up to 2 seconds for the calls, before the store stops.
	 */
	public void stop() {
		List<CompletableFuture<Void>> returns = new ArrayList<>();
		for (var entry : this.slots.asMap().entrySet()) {
			Slot slot = entry.getValue();
			if (this.slots.asMap().remove(entry.getKey(), slot)) {
				returns.add(returnLease(entry.getKey().client(), slot));
			}
		}
		try {
			CompletableFuture.allOf(returns.toArray(CompletableFuture[]::new))
				.get(RETURN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not give back every token lease at shutdown within {}: {} (the tokens come back to "
					+ "the buckets when the leases end)", RETURN_TIMEOUT, ex.toString());
		}
	}

	/** Ends the slot's lease and gives it back under its own limits; completes normally whatever the outcome. */
	private CompletableFuture<Void> returnLease(ClientKey client, Slot slot) {
		return returnLease(client, slot, slot.limits);
	}

	/**
	 * Ends the slot's lease and gives it back under the given limits (the slot's, or leased limits that replaced them:
	 * token buckets, whose keys are those of the slot's limits at the positions they share): its unspent tokens while
	 * it runs, and in any case its reservation, even when it was spent to the last token (else other instances' later
	 * leases keep its tokens reserved). Nothing is sent when the slot holds no lease. Completes normally whatever the
	 * outcome.
	 */
	private CompletableFuture<Void> returnLease(ClientKey client, Slot slot, PlanLimits limits) {
		LeaseStore.ReturnedLease lease;
		synchronized (slot) {
			lease = slot.end();
		}
		if (lease.granted() == 0) {
			return CompletableFuture.completedFuture(null);
		}
		return Futures.call(() -> this.store.lease(null, client, limits, 0, 0, this.durationMicros, lease))
			.handle((ignored, ex) -> {
				if (ex != null) {
					logger.debug("Giving back {} unspent leased tokens of group '{}' failed: {}", lease.unused(),
							limits.group(), Futures.unwrap(ex).toString());
				}
				return null;
			});
	}

	/** The decision with the lease's tokens counted as remaining: the client can spend them here. */
	private static RateLimitDecision withLeasedTokens(RateLimitDecision decision, long leased) {
		if (leased == 0) {
			return decision;
		}
		List<LimitStatus> statuses = new ArrayList<>(decision.statuses().size());
		for (LimitStatus status : decision.statuses()) {
			statuses.add(new LimitStatus(status.limit(), status.satisfied(),
					Math.min(status.limit().capacity(), status.remaining() + leased), status.retryAfterMillis(),
					status.resetMillis()));
		}
		return new RateLimitDecision(decision.limits(), decision.allowed(), statuses, decision.source(),
				decision.slots());
	}

	@Override
	public String toString() {
		return "LeasingRateLimiter -> " + this.store;
	}

	/** One client in one endpoint group. */
	private record SlotKey(ClientKey client, String group) {
	}

	/** A client's lease on this instance and its recent request count; guarded by its own monitor. */
	private static final class Slot {

		final PlanLimits limits;

		/** Whether no request has been seen yet. */
		boolean first = true;

		/** Requests seen since the last lease call (or since the slot was made). */
		long seen;

		/** When counting started (nanoTime). */
		long countingSince;

		/** Whether a lease call is out. */
		boolean taking;

		/** The current lease: tokens granted, left, its store end and local end; statuses as of its start. */
		long granted;

		long left;

		long endMicros;

		long localEndNanos;

		long startNanos;

		List<LimitStatus> statuses = List.of();

		Slot(PlanLimits limits, long now) {
			this.limits = limits;
			this.countingSince = now;
		}

		/** Spends cost tokens of the lease, if it has them and has not ended; else {@code null}. */
		@Nullable RateLimitDecision spend(long cost, long now) {
			if (this.left < cost || now - this.localEndNanos >= 0) {
				return null;
			}
			this.left -= cost;
			long elapsedMillis = (now - this.startNanos) / 1_000_000;
			List<LimitStatus> current = new ArrayList<>(this.statuses.size());
			for (LimitStatus status : this.statuses) {
				LimitDefinition limit = status.limit();
				current.add(new LimitStatus(limit, true, Math.min(limit.capacity(), status.remaining() + this.left), 0,
						Math.max(0, status.resetMillis() - elapsedMillis)));
			}
			return new RateLimitDecision(this.limits, true, current, RateLimitDecision.Source.LEASED);
		}

		/**
		 * Tokens to ask for: the requests seen here per lease duration at the recent rate (counted over at least a
		 * quarter of a duration, so a short burst does not look like a high rate), at most the budget.
		 */
		long wanted(long now, long budget, long durationNanos) {
			long elapsed = Math.max(now - this.countingSince, durationNanos / 4);
			long wanted = (long) Math.min((double) budget, (double) this.seen * durationNanos / elapsed);
			this.seen = 0;
			this.countingSince = now;
			return wanted;
		}

		void start(LeaseStore.Lease lease, long localEndNanos, long startNanos) {
			this.granted = lease.tokens();
			this.left = lease.tokens();
			this.endMicros = lease.endMicros();
			this.localEndNanos = localEndNanos;
			this.startNanos = startNanos;
			this.statuses = lease.decision().statuses();
		}

		/** Ends the current lease: what goes back to the store, {@link LeaseStore.ReturnedLease#NONE} if none. */
		LeaseStore.ReturnedLease end() {
			if (this.granted == 0) {
				return LeaseStore.ReturnedLease.NONE;
			}
			LeaseStore.ReturnedLease lease = new LeaseStore.ReturnedLease(this.granted, this.left, this.endMicros);
			this.granted = 0;
			this.left = 0;
			this.statuses = List.of();
			return lease;
		}

	}

}
