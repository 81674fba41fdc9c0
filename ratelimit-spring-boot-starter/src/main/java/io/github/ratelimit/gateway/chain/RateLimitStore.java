package io.github.ratelimit.gateway.chain;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * Checks and consumes a client's tokens in every limit of a (plan, endpoint group), atomically: either every limit
 * allows the request and each consumes its share of the {@link Cost} (tokens from limits counting requests, the
 * reservation from limits counting usage), or the request is denied and nothing is consumed.
 *
 * <p>The store under the limiter chain ({@code RedisRateLimitStore}, keeping the buckets in Redis so that every
 * gateway instance shares them); the chain's layers ({@link LimiterChainBuilder}) are built over it. Answers are
 * futures. Replace the store with a bean of this type; a store that also implements {@link LeaseStore} gets token
 * leases, one that implements {@link StoreShards} a circuit breaker per shard.
 */
@FunctionalInterface
public interface RateLimitStore {

	/**
	 * Check and consume.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens this request takes from each limit counting requests (1 to the smallest such capacity), and
	 * the units it reserves in each limit counting usage (0 to the smallest such capacity); {@link Cost#NONE} reads
	 * the buckets without consuming (used by the {@code ratelimits} actuator endpoint)
	 * @return the decision; an allowed decision with a reservation holds it ({@link RateLimitDecision#reservation()},
	 * settled once the answer is over). Completed exceptionally when the store is unreachable or answers an error
	 * (the {@linkplain FailurePolicyLimiter failure policy} turns that into its fallback decision); never
	 * {@code null}, never completed with {@code null}
	 */
	CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost);

	/**
	 * Check and consume, for a caller that gives up waiting at a deadline (the failure policy's
	 * {@code ratelimit.redis-timeout}) and then decides the request without the store: a store that can must not
	 * consume anything when it applies the check after that moment, so that a request decided without it takes
	 * nothing from it, however late it runs the check (the Redis store sends the deadline in Redis' time, and its
	 * script refuses a check Redis runs after it). The default ignores the deadline.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost as {@link #tryConsume(ClientKey, PlanLimits, Cost)}
	 * @param deadlineNanos when the caller gives up, in {@link System#nanoTime()} time
	 * @return as {@link #tryConsume(ClientKey, PlanLimits, Cost)}; a check the store refused because its deadline had
	 * passed completes exceptionally (a {@link java.util.concurrent.TimeoutException}), having consumed nothing
	 */
	default CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost,
			long deadlineNanos) {
		return tryConsume(client, limits, cost);
	}

	/**
	 * Check and consume tokens from the limits counting requests, reserving nothing.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param tokens tokens this request takes (1 to the smallest capacity); 0 reads the buckets without consuming
	 * @return as {@link #tryConsume(ClientKey, PlanLimits, Cost)}
	 */
	default CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long tokens) {
		return tryConsume(client, limits, Cost.tokens(tokens));
	}

	/**
	 * Give back the tokens an allowed check took, when the caller abandoned that check (it timed out and the
	 * request was decided without this limiter). Implementations that cannot do it complete at once.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @param cost what the abandoned check took (its tokens and its reservation)
	 * @return completion; a failure is logged by the caller and otherwise ignored
	 */
	default CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
		return CompletableFuture.completedFuture(null);
	}

	/**
	 * Read a client's quotas in an endpoint group without consuming (operator action): each quota's use, period and
	 * reset.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @return one state per {@linkplain LimitDefinition#isQuota() quota} among {@code limits}, in their order (empty
	 * when there is none); completed with an {@link UnsupportedOperationException} when the store cannot read quotas,
	 * exceptionally when it is unreachable or answers an error
	 */
	default CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
		return CompletableFuture
			.failedFuture(new UnsupportedOperationException(getClass().getName() + " cannot read quotas"));
	}

	/**
	 * Grant a client more tokens of one quota in its current period (operator action): the period's use is lowered by
	 * {@code tokens}, below zero when they are more than the use (the client may then be admitted more than the
	 * limit in this period); the next period starts from zero again.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @param quota the quota, one of {@code limits}
	 * @param tokens tokens granted, 1 to {@link LimitDefinition#MAX_TOKENS} (the tokens topped up in one period add up
	 * to at most {@code MAX_TOKENS} less the limit)
	 * @return the tokens added: {@code tokens}, or fewer (0 included) where the period's top-ups reach
	 * {@code MAX_TOKENS} less the limit; completed with an {@link IllegalArgumentException} when {@code quota}
	 * is not a quota of {@code limits} or {@code tokens} is out of range, with an
	 * {@link UnsupportedOperationException} when the store cannot top quotas up, exceptionally when it is unreachable
	 * or answers an error
	 */
	default CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota, long tokens) {
		return CompletableFuture
			.failedFuture(new UnsupportedOperationException(getClass().getName() + " cannot top quotas up"));
	}

	/**
	 * Reset a client's buckets in an endpoint group to full (operator action).
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @return the number of buckets that existed and were removed; completed with an
	 * {@link UnsupportedOperationException} when the limiter cannot reset
	 */
	default CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
		return CompletableFuture
			.failedFuture(new UnsupportedOperationException(getClass().getName() + " cannot reset buckets"));
	}

}
