package io.github.ratelimit.gateway.chain;

import io.github.ratelimit.gateway.limits.LimitDefinition;

/**
 * The state of one limit's bucket after a check.
 *
 * @param limit the limit
 * @param satisfied whether the bucket held enough tokens for the request's cost
 * @param remaining whole tokens left in the bucket after the check (0 to capacity); a denied request consumed none
 * @param retryAfterMillis when not satisfied, milliseconds until the bucket holds enough tokens for the cost
 * (waiting that long succeeds if nothing else consumes); 0 when satisfied
 * @param resetMillis milliseconds until the bucket is full again (0 when full)
 */
public record LimitStatus(LimitDefinition limit, boolean satisfied, long remaining, long retryAfterMillis,
		long resetMillis) {
}
