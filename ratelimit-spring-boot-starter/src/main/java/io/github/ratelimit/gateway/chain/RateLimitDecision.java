package io.github.ratelimit.gateway.chain;

import java.util.List;

import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * The outcome of one rate limit check: allowed or denied overall, with the state of each limit and where the
 * decision came from.
 *
 * @param limits the limits that were checked
 * @param allowed whether the request may proceed
 * @param statuses the state of each limit, in the order of {@code limits.limits()}; empty when no limiter decided
 * @param source where the decision came from
 * @param slots the concurrency slots an allowed request holds until its response completes (the front end releases
 * them); {@link HeldSlots#NONE} when its limits have no concurrency limit, and for every denial
 * @param reservation what an allowed request reserved that its answer settles (units of usage, and on a route that
 * counts only some answers its tokens); {@link Reservation#NONE} when nothing waits for the answer, and for every
 * denial
 */
public record RateLimitDecision(PlanLimits limits, boolean allowed, List<LimitStatus> statuses, Source source,
		HeldSlots slots, Reservation reservation) {

	public RateLimitDecision {
		statuses = List.copyOf(statuses);
		slots = (slots != null) ? slots : HeldSlots.NONE;
		reservation = (reservation != null) ? reservation : Reservation.NONE;
	}

	/**
	 * A decision that holds slots and no reservation.
	 * @param limits the limits that were checked
	 * @param allowed whether the request may proceed
	 * @param statuses the state of each limit, in the order of {@code limits.limits()}
	 * @param source where the decision came from
	 * @param slots the concurrency slots an allowed request holds
	 */
	public RateLimitDecision(PlanLimits limits, boolean allowed, List<LimitStatus> statuses, Source source,
			HeldSlots slots) {
		this(limits, allowed, statuses, source, slots, Reservation.NONE);
	}

	/**
	 * A decision that holds no concurrency slot.
	 * @param limits the limits that were checked
	 * @param allowed whether the request may proceed
	 * @param statuses the state of each limit, in the order of {@code limits.limits()}
	 * @param source where the decision came from
	 */
	public RateLimitDecision(PlanLimits limits, boolean allowed, List<LimitStatus> statuses, Source source) {
		this(limits, allowed, statuses, source, HeldSlots.NONE, Reservation.NONE);
	}

	/**
	 * The same decision holding these slots.
	 * @param held the slots the request holds until its response completes
	 * @return the decision with those slots
	 */
	public RateLimitDecision withSlots(HeldSlots held) {
		return new RateLimitDecision(this.limits, this.allowed, this.statuses, this.source, held, this.reservation);
	}

	/**
	 * The same decision holding this reservation.
	 * @param reserved what the request reserved, settled once its answer is over
	 * @return the decision with that reservation
	 */
	public RateLimitDecision withReservation(Reservation reserved) {
		return new RateLimitDecision(this.limits, this.allowed, this.statuses, this.source, this.slots, reserved);
	}

	/**
	 * A decision of the shared store (Redis).
	 * @param limits the limits checked
	 * @param allowed whether every limit allowed the request
	 * @param statuses the state of each limit
	 * @return the decision
	 */
	public static RateLimitDecision shared(PlanLimits limits, boolean allowed, List<LimitStatus> statuses) {
		return new RateLimitDecision(limits, allowed, statuses, Source.SHARED);
	}

	/**
	 * A request let through unchecked because the limiter was unavailable and the route fails open without a local
	 * limiter ({@code ratelimit.fallback.mode=allow}).
	 * @param limits the limits that would have been checked
	 * @return an allowing decision with no limit states
	 */
	public static RateLimitDecision unavailable(PlanLimits limits) {
		return new RateLimitDecision(limits, true, List.of(), Source.NONE);
	}

	/**
	 * A request refused because the limiter was unavailable and the route is critical (fail closed).
	 * @param limits the limits that would have been checked
	 * @return a refusing decision with no limit states
	 */
	public static RateLimitDecision failedClosed(PlanLimits limits) {
		return new RateLimitDecision(limits, false, List.of(), Source.NONE);
	}

	/**
	 * Whether a limiter decided (as opposed to {@link #unavailable} and {@link #failedClosed}).
	 * @return {@code true} when limit states are known
	 */
	public boolean isDecided() {
		return this.source != Source.NONE;
	}

	/**
	 * Whether the request was refused because no limiter could decide and the route fails closed (the front end
	 * answers 503 Service Unavailable): the one place the failure policy's fail-closed rule shows.
	 * @return {@code true} only for {@link #failedClosed} decisions
	 */
	public boolean isFailedClosed() {
		return this.source == Source.NONE && !this.allowed;
	}

	/**
	 * Milliseconds until every violated limit holds enough tokens: the largest retry-after among them, because a
	 * denied request consumed nothing and buckets only gain tokens while waiting (for a concurrency limit, an
	 * estimate of when a slot frees).
	 * @return milliseconds to wait, 0 when allowed
	 */
	public long retryAfterMillis() {
		return this.statuses.stream().mapToLong(LimitStatus::retryAfterMillis).max().orElse(0);
	}

	/**
	 * The limits this request violated.
	 * @return the unsatisfied limit states, empty when allowed
	 */
	public List<LimitStatus> violated() {
		return this.statuses.stream().filter((s) -> !s.satisfied()).toList();
	}

	/** Where a decision came from. */
	public enum Source {

		/** The shared buckets in Redis, seen by every gateway instance. */
		SHARED,

		/**
		 * A denial of the shared store remembered by this instance until its Retry-After (the over-limit cache):
		 * the same answer Redis would give, without asking it.
		 */
		CACHED,

		/**
		 * Tokens of a lease this instance took from the shared buckets ({@link LeasingRateLimiter}): consumed in Redis
		 * when the lease was taken, spent here; the statuses are the shared buckets' as of then, with the lease's
		 * unspent tokens counted as remaining.
		 */
		LEASED,

		/** This instance's local fallback limiter, holding its share of each limit, while Redis is unavailable. */
		LOCAL_FALLBACK,

		/** No limiter: the request was let through unchecked or refused (fail closed). */
		NONE

	}

}
