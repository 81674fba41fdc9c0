package io.github.ratelimit.gateway.limiter;

import java.util.List;

import io.github.ratelimit.gateway.limit.PlanLimits;

/**
 * The outcome of one rate limit check: allowed or denied overall, with the state of each limit.
 *
 * @param limits the limits that were checked
 * @param allowed whether the request may proceed (every limit was satisfied and consumed, or no decision could be
 * made and the request is let through)
 * @param statuses the state of each limit, in the order of {@code limits.limits()}; empty when the limiter was
 * unavailable
 */
public record RateLimitDecision(PlanLimits limits, boolean allowed, List<LimitStatus> statuses) {

	public RateLimitDecision {
		statuses = List.copyOf(statuses);
	}

	/**
	 * A decision made without the shared state because the limiter was unavailable (Redis error or timeout).
	 * @param limits the limits that would have been checked
	 * @return an allowing decision with no limit states
	 */
	public static RateLimitDecision unavailable(PlanLimits limits) {
		return new RateLimitDecision(limits, true, List.of());
	}

	/**
	 * Whether the limiter decided (as opposed to {@link #unavailable(PlanLimits)}).
	 * @return {@code true} when limit states are known
	 */
	public boolean isDecided() {
		return !this.statuses.isEmpty();
	}

	/**
	 * Milliseconds until every violated limit holds enough tokens: the largest retry-after among them, because a
	 * denied request consumed nothing and buckets only gain tokens while waiting.
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

}
