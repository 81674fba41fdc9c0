package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * A shared store that can hand out token leases: tokens taken from a client's buckets ahead of the requests that spend
 * them, so that an instance decides a busy client's next requests locally ({@link LeasingRateLimiter}). Implemented by
 * the Redis store, for token buckets.
 *
 * <p>The rules a store keeps (the Redis store's script does): a lease is consumed from every bucket when taken, in the
 * same atomic step as the request that takes it; it is at most half of what every bucket holds after that request (so
 * leases shrink to nothing as a bucket nears empty); and until the lease ends, the bucket does not refill past the
 * tokens leases hold, so that the tokens left in the store plus the unspent leased tokens never exceed the capacity.
 */
public interface LeaseStore {

	/**
	 * Check and consume {@code cost} tokens like {@link RateLimitStore#tryConsume}, and if allowed, take a lease
	 * of up to {@code wanted} more tokens from every limit; the instance's previous lease of these limits (if any)
	 * ends in the same call: its reservation is released, and its unspent tokens go back if it has not ended in the
	 * store's time (a lease given back at or after its end gives nothing back: its unspent tokens counted as spent
	 * at its end).
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group, every one a token bucket
	 * @param cost tokens this request takes (0: only the previous lease is returned)
	 * @param wanted tokens wanted for the lease (0: none)
	 * @param durationMicros how long the lease may be spent, in microseconds (at least 1)
	 * @param previous the previous lease, or {@link ReturnedLease#NONE}
	 * @return the decision (its statuses without the leased tokens) and the lease; completed exceptionally when the
	 * store is unreachable or answers an error
	 */
	CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted, long durationMicros,
			ReturnedLease previous);

	/**
	 * Check, consume and take a lease as {@link #lease(ClientKey, PlanLimits, long, long, long, ReturnedLease)}, for
	 * a caller that gives up waiting at a deadline: as
	 * {@link RateLimitStore#tryConsume(ClientKey, PlanLimits, io.github.ratelimit.gateway.limits.Cost, long)}, a
	 * store that can consumes nothing (and gives back no previous lease) when it applies the call after that moment.
	 * The default ignores the deadline.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group, every one a token bucket
	 * @param cost tokens this request takes
	 * @param wanted tokens wanted for the lease (0: none)
	 * @param durationMicros how long the lease may be spent, in microseconds (at least 1)
	 * @param previous the previous lease, or {@link ReturnedLease#NONE}
	 * @param deadlineNanos when the caller gives up, in {@link System#nanoTime()} time
	 * @return as {@link #lease(ClientKey, PlanLimits, long, long, long, ReturnedLease)}; a call refused past its
	 * deadline completes exceptionally (a {@link java.util.concurrent.TimeoutException}), having changed nothing
	 */
	default CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
			long durationMicros, ReturnedLease previous, long deadlineNanos) {
		return lease(client, limits, cost, wanted, durationMicros, previous);
	}

	/**
	 * The store's answer to a lease call.
	 * @param decision the decision on the request's own cost; statuses as the store holds them after the call
	 * @param tokens tokens leased from every limit (0 when denied, or when the buckets hold too little)
	 * @param endMicros the lease's end in the store's time (microseconds since the epoch; 0 when nothing was leased)
	 */
	record Lease(RateLimitDecision decision, long tokens, long endMicros) {
	}

	/**
	 * A lease being given back.
	 * @param granted tokens it was granted
	 * @param unused tokens of it left unspent (0 to {@code granted})
	 * @param endMicros its end, as the store returned it
	 */
	record ReturnedLease(long granted, long unused, long endMicros) {

		/** No previous lease. */
		public static final ReturnedLease NONE = new ReturnedLease(0, 0, 0);

	}

}
