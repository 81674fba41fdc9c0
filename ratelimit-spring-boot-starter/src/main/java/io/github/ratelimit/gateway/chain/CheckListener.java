package io.github.ratelimit.gateway.chain;

/**
 * Told by the failure policy ({@link FailurePolicyLimiter}) of every check it completes and every failed call to the
 * store behind it. Implementations must be fast and must not throw: they run on the thread that completes the
 * check (often Redis' I/O thread). The metrics ({@code RateLimitMetrics}) are the usual listener.
 */
public interface CheckListener {

	/** Listens to nothing. */
	CheckListener NONE = new CheckListener() {
	};

	/**
	 * Record the duration of one check, from asking the limiter to having a decision.
	 * @param source where the decision came from
	 * @param nanos the duration in nanoseconds (0 or more)
	 */
	default void recordCheck(RateLimitDecision.Source source, long nanos) {
	}

	/**
	 * Record one failed call to the shared store (an error, a timeout, or a call refused by the open breaker).
	 * @param error the failure
	 */
	default void recordRedisError(Throwable error) {
	}

}
