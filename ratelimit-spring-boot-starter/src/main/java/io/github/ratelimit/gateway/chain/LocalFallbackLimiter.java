package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.ScopedLimits;

/**
 * The local fallback limiter: in-memory token buckets of this instance, each holding this instance's share of a
 * limit (capacity and refill divided by the number of gateway instances), used while Redis is unavailable so that
 * the gateway as a whole still admits about one plan's worth per client. Whatever a limit's algorithm, its share is a
 * token bucket: a window limit of c tokens per window w is held as a bucket of c tokens refilled at c per w, which
 * admits about the same rate.
 *
 * <p>Same semantics as the Redis script (continuous refill, all limits checked and consumed all-or-nothing, a denied
 * request consumes nothing), with time from {@link System#nanoTime()}. A share's capacity is at least the request's
 * cost, so a request that fits the shared limit can always pass eventually. Buckets live in a Caffeine cache bounded
 * to {@code maxBuckets} entries (least recently used dropped first) and dropped after an hour unused; a dropped
 * bucket comes back full.
 *
 * <p>A concurrency limit's share is whole slots: {@code max(1, floor(max-in-flight / instances))} requests of the
 * client in flight on this instance, taken by an allowed decision and given back when the front end releases its
 * {@link RateLimitDecision#slots()}, or free again once as old as the limit's {@code max-request-duration} (as in
 * Redis); its Retry-After is 1 s. The slots this instance holds in the shared store count against the same share
 * ({@link #countStoreSlots}). With k instances a client has at most {@code N + (k - 1) * max(1, floor(N / k))}
 * requests in flight while the store is unavailable, and with one instance at most N. Buckets replaced (the
 * instance count changed) or evicted start with every slot free.
 *
 * <p>Limits with {@code scope: global} are kept once per endpoint group (not per client): this instance's share of
 * the group-wide bucket, checked and consumed together with the client's own buckets, all-or-nothing, like the
 * shared store does.
 */
final class LocalFallbackLimiter {

	/** Retry-After of a local denial by a concurrency limit: slots free when responses complete, unknown when. */
	static final long LOCAL_SLOT_RETRY_MILLIS = 1000;

	private final Cache<String, LocalBuckets> buckets;

	private final IntSupplier instances;

	private final LongSupplier nanoClock;

	/**
	 * Create a local limiter.
	 * @param maxBuckets most client buckets kept (at least 1)
	 * @param instances the current number of gateway instances sharing the limits (at least 1)
	 */
	LocalFallbackLimiter(long maxBuckets, IntSupplier instances) {
		this(maxBuckets, instances, System::nanoTime);
	}

	LocalFallbackLimiter(long maxBuckets, IntSupplier instances, LongSupplier nanoClock) {
		this.buckets = Caffeine.newBuilder().maximumSize(maxBuckets).expireAfterAccess(Duration.ofHours(1)).build();
		this.instances = instances;
		this.nanoClock = nanoClock;
	}

	/**
	 * Check and consume synchronously.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @param cost what the request takes: tokens from limits counting requests, its reservation from limits counting
	 * usage
	 * @return the decision, with source {@link RateLimitDecision.Source#LOCAL_FALLBACK}; an allowed one of a
	 * {@linkplain Cost#reserves() reserving} cost holds what it took here as its reservation (settled here: in usage
	 * units, a bucket owing at most its share's capacity)
	 */
	public RateLimitDecision consume(ClientKey client, PlanLimits limits, Cost cost) {
		int share = Math.max(1, this.instances.getAsInt());
		if (!limits.hasGlobalLimits()) {
			LocalBuckets local = bucketsOf(key(limits, client), limits, share, cost);
			synchronized (local) {
				long now = this.nanoClock.getAsLong();
				local.refill(now);
				boolean allowed = local.admits(cost);
				return new RateLimitDecision(limits, allowed, local.take(cost, allowed, limits),
						RateLimitDecision.Source.LOCAL_FALLBACK, allowed ? local.heldSlots(cost) : HeldSlots.NONE,
						allowed ? local.reservation(cost) : Reservation.NONE);
			}
		}
		ScopedLimits scoped = limits.scoped();
		LocalBuckets group = bucketsOf(key(limits, ClientKey.everyone(client.plan())), scoped.global(), share, cost);
		if (scoped.client() == null) {
			synchronized (group) {
				group.refill(this.nanoClock.getAsLong());
				boolean allowed = group.admits(cost);
				return new RateLimitDecision(limits, allowed, scoped.merge(null, group.take(cost, allowed, scoped.global())),
						RateLimitDecision.Source.LOCAL_FALLBACK, allowed ? group.heldSlots(cost) : HeldSlots.NONE,
						allowed ? group.reservation(cost) : Reservation.NONE);
			}
		}
		LocalBuckets own = bucketsOf(key(limits, client), scoped.client(), share, cost);
		// always the client's buckets first, then the group's: no two threads lock them in opposite orders
		synchronized (own) {
			synchronized (group) {
				long now = this.nanoClock.getAsLong();
				own.refill(now);
				group.refill(now);
				boolean ownAllowed = own.admits(cost);
				// a client denied by its own limits takes nothing from the group's
				boolean allowed = ownAllowed && group.admits(cost);
				return new RateLimitDecision(limits, allowed,
						scoped.merge(own.take(cost, allowed, scoped.client()),
								group.take(cost, allowed, scoped.global())),
						RateLimitDecision.Source.LOCAL_FALLBACK,
						allowed ? HeldSlots.both(own.heldSlots(cost), group.heldSlots(cost)) : HeldSlots.NONE,
						allowed ? Reservation.both(own.reservation(cost), group.reservation(cost)) : Reservation.NONE);
			}
		}
	}

	/**
	 * Count the slots an allowed decision of the shared store took against this instance's share of the same
	 * concurrency limits, so that a local decision taken while the store is unavailable admits only what is left of
	 * the share: this instance never has more of a client's requests in flight than {@code max(share, slots it holds
	 * in the store)}. A slot counts here from now until the decision's slots are released or abandoned; a slot
	 * {@linkplain HeldSlots#keep() kept} counts until its limit's {@code max-request-duration} has passed, as in the
	 * store.
	 * @param client the client the decision is for
	 * @param cost what the request took
	 * @param decision an allowed decision of the shared store
	 * @return the decision, its slots also counted here until they end (ended once: a later release, abandon or keep
	 * does nothing); {@code decision} itself when it holds none or is a denial
	 */
	public RateLimitDecision countStoreSlots(ClientKey client, Cost cost, RateLimitDecision decision) {
		HeldSlots store = decision.slots();
		if (store == HeldSlots.NONE || !decision.allowed()) {
			return decision;
		}
		PlanLimits limits = decision.limits();
		int share = Math.max(1, this.instances.getAsInt());
		HeldSlots local;
		if (!limits.hasGlobalLimits()) {
			local = bucketsOf(key(limits, client), limits, share, cost).takeSlot(this.nanoClock.getAsLong());
		}
		else {
			ScopedLimits scoped = limits.scoped();
			local = bucketsOf(key(limits, ClientKey.everyone(client.plan())), scoped.global(), share, cost)
				.takeSlot(this.nanoClock.getAsLong());
			if (scoped.client() != null) {
				local = HeldSlots.both(
						bucketsOf(key(limits, client), scoped.client(), share, cost).takeSlot(this.nanoClock.getAsLong()),
						local);
			}
		}
		if (local == HeldSlots.NONE) {
			return decision;
		}
		HeldSlots counted = local;
		AtomicBoolean ended = new AtomicBoolean();
		return decision.withSlots(new HeldSlots() {
			@Override
			public void release() {
				end(store::release, counted::release);
			}

			@Override
			public void abandon() {
				end(store::abandon, counted::release);
			}

			@Override
			public void keep() {
				end(store::keep, counted::keep); // counted here until it expires
			}

			private void end(Runnable inStore, Runnable here) {
				if (ended.compareAndSet(false, true)) {
					try {
						inStore.run();
					}
					finally {
						here.run();
					}
				}
			}
		});
	}

	private LocalBuckets bucketsOf(String key, PlanLimits limits, int share, Cost cost) {
		return this.buckets.asMap()
			.compute(key, (k, existing) -> (existing != null && existing.matches(limits, share)) ? existing
					: new LocalBuckets(limits, share, cost));
	}

	private static String key(PlanLimits limits, ClientKey client) {
		return limits.group() + '|' + client.kind().tag() + ':' + client.id();
	}

	/**
	 * Number of client buckets currently held.
	 * @return the estimated number of entries
	 */
	public long size() {
		this.buckets.cleanUp();
		return this.buckets.estimatedSize();
	}

	/**
	 * Number of concurrency slots remembered here (taken here, or counted from the shared store, and not yet given
	 * back or forgotten once expired), over every client.
	 * @return the count
	 */
	int slotCount() {
		int count = 0;
		for (LocalBuckets buckets : this.buckets.asMap().values()) {
			synchronized (buckets) {
				count += buckets.held.size();
			}
		}
		return count;
	}

	/** One slot taken here, in every concurrency limit of its buckets; identity is what tells two apart. */
	private static final class LocalSlot {

		final long takenAt;

		LocalSlot(long takenAt) {
			this.takenAt = takenAt;
		}

	}

	/** One client's buckets in one endpoint group, for one (limits, share) pair. */
	private static final class LocalBuckets {

		private final PlanLimits limits;

		private final int share;

		private final double[] capacity;

		private final double[] ratePerNano;

		private final double[] tokens;

		/** Whether limit i is a concurrency limit: {@code tokens[i]} are its free slots, counted from {@link #held}. */
		private final boolean[] slots;

		/** Whether limit i counts usage: it takes a request's reservation, and may owe up to its capacity. */
		private final boolean[] usage;

		private final boolean hasSlots;

		/** A concurrency limit's longest request duration (ns): a slot not given back frees itself after it. */
		private final long[] slotPeriodNanos;

		private final long longestSlotPeriodNanos;

		/** The slots taken here and not given back, oldest first (one per admitted request, in every cc limit). */
		private final Set<LocalSlot> held = new LinkedHashSet<>();

		private long stamp;

		LocalBuckets(PlanLimits limits, int share, Cost cost) {
			this.limits = limits;
			this.share = share;
			int n = limits.limits().size();
			this.capacity = new double[n];
			this.ratePerNano = new double[n];
			this.tokens = new double[n];
			this.slots = new boolean[n];
			this.usage = new boolean[n];
			this.slotPeriodNanos = new long[n];
			long longest = 0;
			for (int i = 0; i < n; i++) {
				LimitDefinition limit = limits.limits().get(i);
				if (limit.isConcurrency()) {
					this.slots[i] = true;
					this.capacity[i] = Math.max(1, limit.capacity() / share);
					this.slotPeriodNanos[i] = limit.refillPeriod().toNanos();
					longest = Math.max(longest, this.slotPeriodNanos[i]);
				}
				else {
					this.usage[i] = limit.isUsage();
					this.capacity[i] = Math.max((double) limit.capacity() / share,
							Math.min(cost.of(limit), limit.capacity()));
					this.ratePerNano[i] = (double) limit.refillTokens() / share / limit.refillPeriod().toNanos();
				}
				this.tokens[i] = this.capacity[i];
			}
			this.hasSlots = limits.hasConcurrencyLimits();
			this.longestSlotPeriodNanos = longest;
			this.stamp = Long.MIN_VALUE;
		}

		/**
		 * Whether these buckets enforce the given limits with the given share. Compares what is enforced, not names
		 * nor plans: a group's global buckets serve clients of every plan that declares the same global limits.
		 */
		boolean matches(PlanLimits limits, int share) {
			if (this.share != share || this.limits.limits().size() != limits.limits().size()) {
				return false;
			}
			for (int i = 0; i < limits.limits().size(); i++) {
				LimitDefinition mine = this.limits.limits().get(i);
				LimitDefinition other = limits.limits().get(i);
				if (mine.capacity() != other.capacity() || mine.refillTokens() != other.refillTokens()
						|| !mine.refillPeriod().equals(other.refillPeriod()) || mine.algorithm() != other.algorithm()
						|| mine.scope() != other.scope() || !mine.unit().equals(other.unit())) {
					return false;
				}
			}
			return true;
		}

		/**
		 * Add the tokens regained since the last check, and count the free slots: a slot given back is free, and so
		 * is one older than its limit's longest request duration (as in Redis). Callers hold this object's monitor.
		 */
		void refill(long now) {
			long elapsed = (this.stamp == Long.MIN_VALUE) ? 0 : Math.max(0, now - this.stamp);
			this.stamp = now;
			for (int i = 0; i < this.tokens.length; i++) {
				this.tokens[i] = Math.min(this.capacity[i], this.tokens[i] + elapsed * this.ratePerNano[i]);
			}
			if (this.hasSlots) {
				countFreeSlots(now);
			}
		}

		private void countFreeSlots(long now) {
			for (int i = 0; i < this.tokens.length; i++) {
				if (this.slots[i]) {
					this.tokens[i] = this.capacity[i];
				}
			}
			for (Iterator<LocalSlot> oldestFirst = this.held.iterator(); oldestFirst.hasNext();) {
				long age = now - oldestFirst.next().takenAt;
				if (age >= this.longestSlotPeriodNanos) {
					oldestFirst.remove(); // expired in every limit
					continue;
				}
				for (int i = 0; i < this.tokens.length; i++) {
					if (this.slots[i] && age < this.slotPeriodNanos[i]) {
						this.tokens[i] = Math.max(0, this.tokens[i] - 1);
					}
				}
			}
		}

		/**
		 * What a request of this cost takes from limit i: a slot from a concurrency limit (none to read), its
		 * reservation from a limit counting usage, else its tokens.
		 */
		private long taken(int i, Cost cost) {
			return this.slots[i] ? Math.min(cost.tokens(), 1) : this.usage[i] ? cost.usage() : cost.tokens();
		}

		/** Whether every bucket holds what the request takes (a free slot). Callers hold this object's monitor. */
		boolean admits(Cost cost) {
			for (int i = 0; i < this.tokens.length; i++) {
				if (this.tokens[i] + 1e-9 < taken(i, cost)) {
					return false;
				}
			}
			return true;
		}

		/**
		 * The slots an allowed request of this cost took here (at the last refill's time), given back once; counted
		 * free again from the next check. Callers hold this object's monitor.
		 */
		HeldSlots heldSlots(Cost cost) {
			if (!this.hasSlots || cost.tokens() == 0) {
				return HeldSlots.NONE;
			}
			return slotTakenAt(this.stamp);
		}

		/**
		 * One slot taken at the given time by a request admitted by the shared store, counted here until it ends
		 * (until it expires, if kept); none when these buckets have no concurrency limit. Slots that have expired
		 * (kept ones older than the longest request duration) are dropped first, so that kept slots never pile up
		 * while only the shared store decides.
		 */
		synchronized HeldSlots takeSlot(long now) {
			if (!this.hasSlots) {
				return HeldSlots.NONE;
			}
			dropExpiredSlots(now);
			return slotTakenAt(now);
		}

		/** Forget the slots older than the longest request duration, oldest first. Callers hold this monitor. */
		private void dropExpiredSlots(long now) {
			for (Iterator<LocalSlot> oldestFirst = this.held.iterator(); oldestFirst.hasNext();) {
				if (now - oldestFirst.next().takenAt < this.longestSlotPeriodNanos) {
					return;
				}
				oldestFirst.remove();
			}
		}

		private HeldSlots slotTakenAt(long takenAt) {
			LocalSlot slot = new LocalSlot(takenAt);
			this.held.add(slot);
			return HeldSlots.once(() -> {
				synchronized (this) {
					this.held.remove(slot);
				}
			});
		}

		/**
		 * What an allowed request took here, settled here once its answer is over: the difference goes back to (or is
		 * taken from) every rate limit's bucket, a bucket owing at most its capacity; slots are not touched.
		 */
		Reservation reservation(Cost taken) {
			if (!taken.reserves() || taken.isNone()) {
				return Reservation.NONE;
			}
			AtomicBoolean ended = new AtomicBoolean();
			return new Reservation() {

				@Override
				public void settle(long used) {
					end(new Cost(0, used - taken.usage()));
				}

				@Override
				public void cancel() {
					end(taken.negated());
				}

				@Override
				public long reserved() {
					return taken.usage();
				}

				private void end(Cost difference) {
					if (ended.compareAndSet(false, true) && !difference.isNone()) {
						adjust(difference);
					}
				}

			};
		}

		/** Take a settlement's difference (negative: give it back) from every rate limit's bucket. */
		private synchronized void adjust(Cost difference) {
			for (int i = 0; i < this.tokens.length; i++) {
				if (!this.slots[i]) {
					this.tokens[i] = Math.max(-this.capacity[i],
							Math.min(this.capacity[i], this.tokens[i] - taken(i, difference)));
				}
			}
		}

		/**
		 * Take what the request takes from every bucket if it is allowed, and tell each bucket's state, reported
		 * under the limits of the request being checked ({@code reportAs}, which {@link #matches}). Callers hold this
		 * object's monitor.
		 */
		List<LimitStatus> take(Cost cost, boolean allowed, PlanLimits reportAs) {
			int n = this.tokens.length;
			List<LimitStatus> statuses = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				long taken = taken(i, cost);
				boolean satisfied = this.tokens[i] + 1e-9 >= taken;
				if (allowed) {
					this.tokens[i] = Math.max(0, this.tokens[i] - taken);
				}
				long retryMs;
				long resetMs;
				if (this.slots[i]) {
					retryMs = satisfied ? 0 : LOCAL_SLOT_RETRY_MILLIS;
					resetMs = (this.tokens[i] < this.capacity[i]) ? reportAs.limits().get(i).refillPeriod().toMillis() : 0;
				}
				else {
					retryMs = satisfied ? 0 : (long) Math.ceil((taken - this.tokens[i]) / this.ratePerNano[i] / 1e6);
					resetMs = (long) Math.ceil((this.capacity[i] - this.tokens[i]) / this.ratePerNano[i] / 1e6);
				}
				statuses.add(new LimitStatus(reportAs.limits().get(i), satisfied,
						Math.max(0, (long) Math.floor(this.tokens[i] + 1e-9)), retryMs, resetMs));
			}
			return statuses;
		}

	}

}
