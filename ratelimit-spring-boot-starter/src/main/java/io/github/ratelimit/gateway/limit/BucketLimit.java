package io.github.ratelimit.gateway.limit;

import java.time.Duration;

/**
 * One token bucket limit as enforced: a bucket of {@code capacity} tokens gaining {@code refillTokens} tokens per
 * {@code refillPeriod}, continuously.
 *
 * @param policyName name of the quota policy shown to clients in the {@code RateLimit-Policy} and
 * {@code RateLimit} fields, e.g. {@code free-search}
 * @param capacity most tokens the bucket holds (1 to 2^53)
 * @param refillTokens tokens added per refill period (1 to 2^53)
 * @param refillPeriod the refill period (at least 1 ms)
 */
public record BucketLimit(String policyName, long capacity, long refillTokens, Duration refillPeriod) {

	/** Largest capacity or refill count: 2^53, the largest integer a Lua number (a double) holds exactly. */
	public static final long MAX_TOKENS = 1L << 53;

	/**
	 * The refill period in microseconds, the time unit of the Lua script.
	 * @return the period in microseconds (at least 1000)
	 */
	public long refillPeriodMicros() {
		return this.refillPeriod.toNanos() / 1000;
	}

	/**
	 * The window of this limit for the {@code w} parameter of {@code RateLimit-Policy}: the time an empty bucket
	 * takes to fill, {@code capacity / (refillTokens / refillPeriod)}, in whole seconds rounded up.
	 * @return the window in seconds, at least 1
	 */
	public long windowSeconds() {
		double seconds = (double) this.capacity * this.refillPeriod.toNanos() / 1e9 / this.refillTokens;
		return Math.max(1, (long) Math.ceil(seconds));
	}

}
