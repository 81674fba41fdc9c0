package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;
import reactor.core.publisher.Mono;

/**
 * Checks and consumes a client's tokens in every limit of a (plan, endpoint group), atomically: either every limit
 * allows the request and each consumes {@code cost} tokens, or the request is denied and nothing is consumed.
 *
 * <p>The default implementation keeps the buckets in Redis ({@code RedisRateLimitStore}), so every gateway
 * instance shares them. Replace it with a bean of this type.
 */
@FunctionalInterface
public interface ClientRateLimiter {

	/**
	 * Check and consume.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens this request takes (1 to the smallest capacity); 0 reads the buckets without consuming
	 * (used by the {@code ratelimits} actuator endpoint)
	 * @return the decision; errors (Redis unreachable, timeout) are signalled as {@code Mono.error} and turned into
	 * a failure policy by the caller
	 */
	Mono<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost);

	/**
	 * {@link #tryConsume} as a future: the form the failure policy ({@code FailurePolicyLimiter}) calls on every
	 * request. The default adapts {@link #tryConsume}; the Redis limiter implements it directly on Lettuce's futures,
	 * without a reactive pipeline per check.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens this request takes, as in {@link #tryConsume}
	 * @return the decision, completed exceptionally when Redis is unreachable or answers an error; never
	 * {@code null}, never completed with {@code null}
	 */
	default CompletableFuture<RateLimitDecision> tryConsumeAsync(ClientKey client, PlanLimits limits, long cost) {
		return tryConsume(client, limits, cost)
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("The limiter answered nothing")))
			.toFuture();
	}

	/**
	 * Give back the tokens an allowed check took, when the caller abandoned that check (it timed out and the
	 * request was decided without this limiter). Implementations that cannot do it ignore the call.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @param cost the tokens the abandoned check took from each limit
	 * @return completion; errors are logged by the caller and otherwise ignored
	 */
	default Mono<Void> refund(ClientKey client, PlanLimits limits, long cost) {
		return Mono.empty();
	}

	/**
	 * Reset a client's buckets in an endpoint group to full (operator action).
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @return the number of buckets that existed and were removed; an {@link UnsupportedOperationException} error
	 * when the limiter cannot reset
	 */
	default Mono<Long> reset(ClientKey client, PlanLimits limits) {
		return Mono.error(new UnsupportedOperationException(getClass().getName() + " cannot reset buckets"));
	}

}
