package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;

/**
 * The limiter chain as a front end sees it: one request in, one decision out, never an error. Built by
 * {@link LimiterChainBuilder} ({@link DefaultLimiterChain}); a bean of this type replaces the built one.
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
