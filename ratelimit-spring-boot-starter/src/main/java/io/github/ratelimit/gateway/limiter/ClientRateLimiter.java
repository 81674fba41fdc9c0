package io.github.ratelimit.gateway.limiter;

import io.github.ratelimit.gateway.key.ClientKey;
import io.github.ratelimit.gateway.limit.PlanLimits;
import reactor.core.publisher.Mono;

/**
 * Checks and consumes a client's tokens in every limit of a (plan, endpoint group), atomically: either every limit
 * allows the request and each consumes {@code cost} tokens, or the request is denied and nothing is consumed.
 *
 * <p>The default implementation keeps the buckets in Redis ({@code RedisTokenBucketRateLimiter}), so every gateway
 * instance shares them. Replace it with a bean of this type.
 */
@FunctionalInterface
public interface ClientRateLimiter {

	/**
	 * Check and consume.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens this request takes (1 to the smallest capacity)
	 * @return the decision; errors (Redis unreachable, timeout) are signalled as {@code Mono.error} and turned into
	 * a failure policy by the caller
	 */
	Mono<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost);

}
