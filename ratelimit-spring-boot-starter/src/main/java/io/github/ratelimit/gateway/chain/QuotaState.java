package io.github.ratelimit.gateway.chain;

import java.time.Instant;

import io.github.ratelimit.gateway.limits.LimitDefinition;

/**
 * One client's use of a {@linkplain LimitDefinition#isQuota() quota} in the period that holds the store's time (Redis'
 * clock for the Redis store), as {@link RateLimitStore#readQuotas} reads it.
 *
 * @param limit the quota
 * @param used tokens counted in the period less tokens an operator topped up in it ({@link RateLimitStore#topUp}):
 * 0 to the limit without top-ups; below zero after a top-up beyond the use
 * @param periodStart the period's start (inclusive)
 * @param periodEnd the period's end (exclusive): when the quota resets
 */
public record QuotaState(LimitDefinition limit, long used, Instant periodStart, Instant periodEnd) {

	/**
	 * Tokens the quota still admits in this period: its limit less {@link #used()}, above the limit after a top-up
	 * beyond the use; 0 or less once it is exhausted (a settled usage charge may take it below zero).
	 * @return the tokens left
	 */
	public long remaining() {
		return this.limit.capacity() - this.used;
	}

}
