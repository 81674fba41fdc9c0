package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;

/**
 * The limiter chain as a front end sees it: one request in, one decision out, never an error. Implemented by the
 * {@link FailurePolicyLimiter failure policy} and by the layers in front of it (the {@link OverLimitCache}); the
 * auto-configuration hands the outermost one to the front end.
 */
@FunctionalInterface
public interface LimiterChain {

	/**
	 * Decide a request.
	 * @param request the client, limits, cost and failure mode
	 * @return the decision, possibly already completed (a remembered denial, an open breaker); never completed
	 * exceptionally: failures become the failure policy's decision. Cancelling the future abandons the check (tokens
	 * an answer still to come takes are given back).
	 */
	CompletableFuture<RateLimitDecision> check(RateLimitRequest request);

}
