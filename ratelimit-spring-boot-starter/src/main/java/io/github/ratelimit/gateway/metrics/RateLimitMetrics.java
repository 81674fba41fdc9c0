package io.github.ratelimit.gateway.metrics;

import io.github.ratelimit.gateway.limiter.RateLimitDecision;

/**
 * Observes decisions. The default implementation counts them with Micrometer when a {@code MeterRegistry} exists
 * ({@link MicrometerRateLimitMetrics}); otherwise decisions are not recorded.
 */
@FunctionalInterface
public interface RateLimitMetrics {

	/** Records nothing. */
	RateLimitMetrics NONE = (group, decision) -> {
	};

	/**
	 * Record one decision.
	 * @param group the endpoint group
	 * @param decision the decision
	 */
	void record(String group, RateLimitDecision decision);

	/**
	 * The outcome label of a decision: {@code allowed}, {@code denied}, {@code fallback_allowed},
	 * {@code fallback_denied}, {@code unchecked} (let through, no limiter available) or {@code failed_closed}.
	 * @param decision the decision
	 * @return the outcome label
	 */
	static String outcome(RateLimitDecision decision) {
		return switch (decision.source()) {
			case SHARED -> decision.allowed() ? "allowed" : "denied";
			case LOCAL_FALLBACK -> decision.allowed() ? "fallback_allowed" : "fallback_denied";
			case NONE -> decision.allowed() ? "unchecked" : "failed_closed";
		};
	}

}
