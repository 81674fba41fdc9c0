package io.github.ratelimit.gateway.chain;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;

/**
 * The state of one limit's bucket after a check.
 *
 * @param limit the limit
 * @param satisfied whether the bucket held enough tokens for the request's cost
 * @param remaining whole tokens left in the bucket after the check (0 to capacity); a denied request consumed none.
 * For a concurrency limit: free slots
 * @param retryAfterMillis when not satisfied, milliseconds until the bucket holds enough tokens for the cost
 * (waiting that long succeeds if nothing else consumes); 0 when satisfied. For a concurrency limit, an estimate: until
 * the slot held longest has been held as long as slots are on average (see {@code rate_limit.lua}, {@code cc.wait})
 * @param resetMillis milliseconds until the bucket is full again (0 when full); for a concurrency limit, until every
 * slot now taken has expired at the latest
 */
public record LimitStatus(LimitDefinition limit, boolean satisfied, long remaining, long retryAfterMillis,
		long resetMillis) {

	/**
	 * This state once what the check took is given back: {@code cost} tokens, as the script's refund operation does
	 * it (each algorithm's refund sits beside its check in {@code META-INF/ratelimit/rate_limit.lua}): the remaining
	 * tokens grow by the cost (capped at capacity); a token bucket is then full sooner by the time the cost takes to
	 * refill, a window's reset stays where it was. A concurrency limit gets its one slot back (the remaining slots
	 * grow by 1, capped at capacity; the reset stays).
	 * @param cost the tokens given back (0 or more)
	 * @return the state after the refund; {@code satisfied} and {@code retryAfterMillis} unchanged
	 */
	public LimitStatus afterGiveBack(long cost) {
		if (this.limit.isConcurrency()) {
			return new LimitStatus(this.limit, this.satisfied, Math.min(this.limit.capacity(), this.remaining + 1),
					this.retryAfterMillis, this.resetMillis);
		}
		long refilled = Math.min(this.limit.capacity(), this.remaining + cost);
		long reset = this.resetMillis;
		if (this.limit.algorithm() == Algorithm.TOKEN_BUCKET) {
			long refillMs = (long) ((double) cost * this.limit.refillPeriod().toMillis() / this.limit.refillTokens());
			reset = (refilled >= this.limit.capacity()) ? 0 : Math.max(0, reset - refillMs);
		}
		return new LimitStatus(this.limit, this.satisfied, refilled, this.retryAfterMillis, reset);
	}

}
