package io.github.ratelimit.gateway.chain;

import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.ScopedLimits;
import org.jspecify.annotations.Nullable;

/**
 * The local fallback limiter: in-memory token buckets of this instance, each holding this instance's share of a
 * limit (capacity and refill divided by the number of gateway instances), used while Redis is unavailable so that
 * the gateway as a whole still admits about one plan's worth per client. Whatever a rate limit's algorithm, its share
 * is a token bucket: a window limit of c tokens per window w is held as a bucket of c tokens refilled at c per w,
 * which admits about the same rate. Quotas and concurrency limits are held differently (below).
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
 * <p>A {@linkplain LimitDefinition#isQuota() quota} of L per period, with k instances, is a count per client in the
 * period of its {@link QuotaPeriod} that holds the gateway's wall clock ({@code wallClock}, not Redis'). The count
 * starts with the client's first local decision in a period, at time t, and admits at most {@code floor(L * untilEnd(t)
 * / (k * length(t)))}, where {@code untilEnd(t)} is the time from t to the period's end and {@code length(t)} the
 * period's length (both in milliseconds): this instance's share of the part of the period that is left, so the k
 * instances together admit at most L times the fraction of the period left when their counts started. The share may be
 * 0 (no minimum of one cost): then the client is denied until the period ends. Nothing is refilled during the period;
 * when the wall clock reaches its end the next decision starts a new count with a new share (the whole share when it
 * comes at the boundary). A wall clock going back never restarts a count. A denial by a quota has a Retry-After (and a
 * reset) until the period's end. A quota counting usage takes a request's reservation and is settled like the other
 * usage limits (owing at most its share); a settlement arriving after its period's count was replaced changes nothing.
 * Buckets counting a quota are kept until that period's end even when unused for longer than an hour (unless {@code
 * maxBuckets} forces them out, least recently used first).
 *
 * <p>Limits with {@code scope: global} are kept once per endpoint group (not per client): this instance's share of
 * the group-wide bucket, checked and consumed together with the client's own buckets, all-or-nothing, like the
 * shared store does.
 */
final class LocalFallbackLimiter {

	/** Retry-After of a local denial by a concurrency limit: slots free when responses complete, unknown when. */
	static final long LOCAL_SLOT_RETRY_MILLIS = 1000;

	/** How long buckets are kept unused (longer while they count a quota whose period has not ended). */
	static final long IDLE_MILLIS = Duration.ofHours(1).toMillis();

	private final Cache<String, LocalBuckets> buckets;

	private final IntSupplier instances;

	private final LongSupplier nanoClock;

	private final LongSupplier wallClock;

	/**
	 * Create a local limiter.
	 * @param maxBuckets most client buckets kept (at least 1)
	 * @param instances the current number of gateway instances sharing the limits (at least 1)
	 */
	LocalFallbackLimiter(long maxBuckets, IntSupplier instances) {
		this(maxBuckets, instances, System::nanoTime, System::currentTimeMillis);
	}

	LocalFallbackLimiter(long maxBuckets, IntSupplier instances, LongSupplier nanoClock) {
		this(maxBuckets, instances, nanoClock, System::currentTimeMillis);
	}

	/**
	 * Create a local limiter with its clocks.
	 * @param maxBuckets most client buckets kept (at least 1)
	 * @param instances the current number of gateway instances sharing the limits (at least 1)
	 * @param nanoClock a monotonic time in nanoseconds, as {@link System#nanoTime()}: refills and slot ages
	 * @param wallClock the gateway's time in milliseconds since the epoch, as {@link System#currentTimeMillis()}:
	 * which period of a quota a request falls in
	 */
	LocalFallbackLimiter(long maxBuckets, IntSupplier instances, LongSupplier nanoClock, LongSupplier wallClock) {
		this.buckets = Caffeine.newBuilder()
			.maximumSize(maxBuckets)
			.expireAfter(new KeptWhileCounting(wallClock))
			.ticker(nanoClock::getAsLong)
			.build();
		this.instances = instances;
		this.nanoClock = nanoClock;
		this.wallClock = wallClock;
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
			String key = key(limits, client);
			LocalBuckets local = bucketsOf(key, limits, share, cost);
			RateLimitDecision decision;
			boolean counting;
			synchronized (local) {
				long now = this.nanoClock.getAsLong();
				counting = local.refill(now, this.wallClock.getAsLong());
				boolean allowed = local.admits(cost);
				decision = new RateLimitDecision(limits, allowed, local.take(cost, allowed, limits),
						RateLimitDecision.Source.LOCAL_FALLBACK, allowed ? local.heldSlots(cost) : HeldSlots.NONE,
						allowed ? local.reservation(cost) : Reservation.NONE);
			}
			keepWhileCounting(counting, key, local);
			return decision;
		}
		ScopedLimits scoped = limits.scoped();
		String groupKey = key(limits, ClientKey.everyone(client.plan()));
		LocalBuckets group = bucketsOf(groupKey, scoped.global(), share, cost);
		RateLimitDecision decision;
		boolean groupCounting;
		if (scoped.client() == null) {
			synchronized (group) {
				groupCounting = group.refill(this.nanoClock.getAsLong(), this.wallClock.getAsLong());
				boolean allowed = group.admits(cost);
				decision = new RateLimitDecision(limits, allowed,
						scoped.merge(null, group.take(cost, allowed, scoped.global())),
						RateLimitDecision.Source.LOCAL_FALLBACK, allowed ? group.heldSlots(cost) : HeldSlots.NONE,
						allowed ? group.reservation(cost) : Reservation.NONE);
			}
			keepWhileCounting(groupCounting, groupKey, group);
			return decision;
		}
		String ownKey = key(limits, client);
		LocalBuckets own = bucketsOf(ownKey, scoped.client(), share, cost);
		boolean ownCounting;
		// always the client's buckets first, then the group's: no two threads lock them in opposite orders
		synchronized (own) {
			synchronized (group) {
				long now = this.nanoClock.getAsLong();
				long wall = this.wallClock.getAsLong();
				ownCounting = own.refill(now, wall);
				groupCounting = group.refill(now, wall);
				boolean ownAllowed = own.admits(cost);
				// a client denied by its own limits takes nothing from the group's
				boolean allowed = ownAllowed && group.admits(cost);
				decision = new RateLimitDecision(limits, allowed,
						scoped.merge(own.take(cost, allowed, scoped.client()),
								group.take(cost, allowed, scoped.global())),
						RateLimitDecision.Source.LOCAL_FALLBACK,
						allowed ? HeldSlots.both(own.heldSlots(cost), group.heldSlots(cost)) : HeldSlots.NONE,
						allowed ? Reservation.both(own.reservation(cost), group.reservation(cost)) : Reservation.NONE);
			}
		}
		keepWhileCounting(ownCounting, ownKey, own);
		keepWhileCounting(groupCounting, groupKey, group);
		return decision;
	}

	/**
	 * Keep buckets whose quota count has just started until its period ends: their expiry was set when they were
	 * looked up, before the count started.
	 */
	private void keepWhileCounting(boolean countStarted, String key, LocalBuckets buckets) {
		if (countStarted) {
			this.buckets.policy().expireVariably().ifPresent((expiry) -> {
				if (this.buckets.asMap().get(key) == buckets) {
					expiry.setExpiresAfter(key, buckets.keepNanos(this.wallClock.getAsLong()), TimeUnit.NANOSECONDS);
				}
			});
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
	 * Drop a client's own buckets in a group (an operator changed them in the shared store): its next local decision
	 * starts from a full share. The group-wide buckets ({@code scope: global}) are left alone: no change of one client
	 * touches them. A concurrency slot counted in the dropped buckets is not counted any more (the store's were
	 * deleted by the reset too).
	 * @param change the client and group
	 */
	void forget(ClientChange change) {
		this.buckets.invalidate(change.group() + '|' + change.kind().tag() + ':' + change.id());
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

	/**
	 * This instance's share of a quota of {@code limit} per period, counted from a time {@code untilEndMillis} before
	 * the end of a period of {@code lengthMillis}: {@code floor(limit * untilEndMillis / (instances * lengthMillis))},
	 * exactly.
	 * @param limit the quota (1 to 2^53)
	 * @param instances gateway instances sharing it (at least 1)
	 * @param untilEndMillis time left in the period (0 to {@code lengthMillis})
	 * @param lengthMillis the period's length (above 0)
	 * @return the share, 0 to {@code limit / instances}
	 */
	static long quotaShare(long limit, int instances, long untilEndMillis, long lengthMillis) {
		return BigInteger.valueOf(limit)
			.multiply(BigInteger.valueOf(untilEndMillis))
			.divide(BigInteger.valueOf(instances).multiply(BigInteger.valueOf(lengthMillis)))
			.longValueExact();
	}

	/**
	 * Buckets are dropped an hour after their last use, or, while they count a quota, once its period has ended if
	 * that is later: a client idle for an hour must not get a second share of the same period.
	 */
	private static final class KeptWhileCounting implements Expiry<String, LocalBuckets> {

		private final LongSupplier wallClock;

		KeptWhileCounting(LongSupplier wallClock) {
			this.wallClock = wallClock;
		}

		@Override
		public long expireAfterCreate(String key, LocalBuckets value, long currentTime) {
			return value.keepNanos(this.wallClock.getAsLong());
		}

		@Override
		public long expireAfterUpdate(String key, LocalBuckets value, long currentTime,
				long currentDuration) {
			return value.keepNanos(this.wallClock.getAsLong());
		}

		@Override
		public long expireAfterRead(String key, LocalBuckets value, long currentTime,
				long currentDuration) {
			return value.keepNanos(this.wallClock.getAsLong());
		}

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

		/**
		 * The period of limit i if it is a quota (else {@code null}): {@code tokens[i]} are what is left of the share
		 * counted in {@code [periodStart[i], periodEnd[i])}, {@code capacity[i]} that share.
		 */
		private final @Nullable QuotaPeriod[] quota;

		/** Where limit i's quota count started (epoch ms), and where its period ends; MIN_VALUE: not counting yet. */
		private final long[] periodStart;

		private final long[] periodEnd;

		/** The latest end of a period a quota here counts in (epoch ms), 0 while none counts. */
		private volatile long countingUntil;

		/** The wall clock at the last refill (epoch ms). */
		private long wallStamp;

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
			this.quota = new QuotaPeriod[n];
			this.periodStart = new long[n];
			this.periodEnd = new long[n];
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
				else if (limit.isQuota()) {
					// no share until a count starts (refill): it depends on the time left in the period
					this.usage[i] = limit.isUsage();
					this.quota[i] = limit.quotaPeriod();
					this.periodStart[i] = Long.MIN_VALUE;
					this.periodEnd[i] = Long.MIN_VALUE;
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
						|| mine.scope() != other.scope() || !mine.unit().equals(other.unit())
						|| !Objects.equals(mine.quotaPeriod(), other.quotaPeriod())) {
					return false;
				}
			}
			return true;
		}

		/**
		 * Add the tokens regained since the last check, count the free slots (a slot given back is free, and so is
		 * one older than its limit's longest request duration, as in Redis), and start a quota's count in a new
		 * period once the wall clock has reached its current one's end (or when none started yet). Callers hold this
		 * object's monitor.
		 * @param now the monotonic time (ns)
		 * @param wall the gateway's time (epoch ms)
		 * @return whether a quota's count started
		 */
		boolean refill(long now, long wall) {
			long elapsed = (this.stamp == Long.MIN_VALUE) ? 0 : Math.max(0, now - this.stamp);
			this.stamp = now;
			this.wallStamp = wall;
			boolean started = false;
			for (int i = 0; i < this.tokens.length; i++) {
				QuotaPeriod period = this.quota[i];
				if (period != null) {
					if (wall >= this.periodEnd[i]) {
						startCount(i, period, wall);
						started = true;
					}
				}
				else {
					this.tokens[i] = Math.min(this.capacity[i], this.tokens[i] + elapsed * this.ratePerNano[i]);
				}
			}
			if (this.hasSlots) {
				countFreeSlots(now);
			}
			return started;
		}

		/** A new count of quota i in the period holding {@code wall}, with the share of what is left of it. */
		private void startCount(int i, QuotaPeriod period, long wall) {
			QuotaPeriod.Interval current = period.periodAt(Instant.ofEpochMilli(wall));
			long start = current.start().toEpochMilli();
			long end = current.end().toEpochMilli();
			this.capacity[i] = quotaShare(this.limits.limits().get(i).capacity(), this.share, end - wall, end - start);
			this.tokens[i] = this.capacity[i];
			this.periodStart[i] = start;
			this.periodEnd[i] = end;
			this.countingUntil = Math.max(this.countingUntil, end);
		}

		/**
		 * How long to keep these buckets from now: an hour, or until the end of the latest period a quota here counts
		 * in if that is later.
		 * @param wall the gateway's time (epoch ms)
		 * @return nanoseconds
		 */
		long keepNanos(long wall) {
			long untilEnd = this.countingUntil - wall;
			return (untilEnd > IDLE_MILLIS) ? TimeUnit.MILLISECONDS.toNanos(untilEnd)
					: TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS);
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
		 * taken from) every rate limit's bucket, a bucket owing at most its capacity (what is not taken is answered as
		 * not charged, and counted as forgiven by the meters), and from every quota still counting the period the
		 * request was admitted in; slots are not touched. Callers hold this object's monitor.
		 */
		Reservation reservation(Cost taken) {
			if (!taken.reserves() || taken.isNone()) {
				return Reservation.NONE;
			}
			long[] admittedIn = this.periodEnd.clone();
			AtomicBoolean ended = new AtomicBoolean();
			return new Reservation() {

				@Override
				public CompletionStage<Long> settle(long used) {
					return end(new Cost(0, used - taken.usage()));
				}

				@Override
				public CompletionStage<Long> cancel() {
					return end(taken.negated());
				}

				@Override
				public long reserved() {
					return taken.usage();
				}

				private CompletionStage<Long> end(Cost difference) {
					if (!ended.compareAndSet(false, true)) {
						return Reservation.NOTHING;
					}
					long change = difference.isNone() ? 0 : adjust(difference, admittedIn);
					return CompletableFuture.completedFuture(hasUsage() ? taken.usage() + change : 0L);
				}

			};
		}

		/** Whether a bucket counts usage. */
		private boolean hasUsage() {
			for (boolean usageLimit : this.usage) {
				if (usageLimit) {
					return true;
				}
			}
			return false;
		}

		/**
		 * Take a settlement's difference (negative: give it back) from every rate limit's bucket, and from every quota
		 * whose count is still the one of the period the request was admitted in ({@code admittedIn}: each limit's
		 * period end then), each between minus its capacity and its capacity.
		 * @return what the buckets counting usage changed: the least any of them took (negative: gave back)
		 */
		private synchronized long adjust(Cost difference, long[] admittedIn) {
			long least = Long.MAX_VALUE;
			for (int i = 0; i < this.tokens.length; i++) {
				long change = 0;
				if (!this.slots[i] && this.periodEnd[i] == admittedIn[i]) {
					double before = this.tokens[i];
					this.tokens[i] = Math.max(-this.capacity[i],
							Math.min(this.capacity[i], before - taken(i, difference)));
					change = Math.round(before - this.tokens[i]);
				}
				if (this.usage[i]) {
					least = Math.min(least, change);
				}
			}
			return (least == Long.MAX_VALUE) ? 0 : least;
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
				if (this.quota[i] != null) {
					// nothing comes back before the period's end, when a new count starts
					long untilEnd = Math.max(1, this.periodEnd[i] - this.wallStamp);
					retryMs = satisfied ? 0 : untilEnd;
					resetMs = (this.tokens[i] < this.capacity[i]) ? untilEnd : 0;
				}
				else if (this.slots[i]) {
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
