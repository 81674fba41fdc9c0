package io.github.ratelimit.gateway.chain;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.jspecify.annotations.Nullable;

/**
 * A layer of the chain under the failure policy (scopes, leases, the shards' breakers): the store's calls, made
 * under the deadline of the check they belong to, so that a breaker records what the policy observed.
 */
interface StoreLayer extends RateLimitStore {

	/**
	 * Check and consume, as {@link RateLimitStore#tryConsume}, within a check's deadline.
	 * @param deadline the check's deadline; {@code null} for a call outside a check
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost what this request takes (tokens, and its reservation of usage); {@link Cost#NONE} only reads
	 * @return the decision; completed exceptionally when the store fails
	 */
	CompletableFuture<RateLimitDecision> tryConsume(@Nullable Deadline deadline, ClientKey client, PlanLimits limits,
			Cost cost);

	@Override
	default CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
		return tryConsume(null, client, limits, cost);
	}

	/**
	 * Check, consume and take a lease, as {@link LeaseStore#lease}, within a check's deadline.
	 * @param deadline the check's deadline; {@code null} for a call outside a check (a lease given back)
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group, every one a token bucket
	 * @param cost tokens this request takes
	 * @param wanted tokens wanted for the lease
	 * @param durationMicros how long the lease may be spent, in microseconds
	 * @param previous the previous lease, or {@link LeaseStore.ReturnedLease#NONE}
	 * @return the decision and the lease; completed with an {@link UnsupportedOperationException} when the store
	 * cannot lease
	 */
	default CompletableFuture<LeaseStore.Lease> lease(@Nullable Deadline deadline, ClientKey client,
			PlanLimits limits, long cost, long wanted, long durationMicros, LeaseStore.ReturnedLease previous) {
		return CompletableFuture.failedFuture(new UnsupportedOperationException(this + " cannot lease tokens"));
	}

	/**
	 * A store as a layer: its checks get their check's deadline, nothing waits on it.
	 * @param store the store (a layer is returned as it is)
	 * @return the layer
	 */
	static StoreLayer of(RateLimitStore store) {
		return (store instanceof StoreLayer layer) ? layer : new Bare(store);
	}

	/** A store under no breaker: it is given a check's deadline, and records nothing. */
	record Bare(RateLimitStore store) implements StoreLayer {

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(@Nullable Deadline deadline, ClientKey client,
				PlanLimits limits, Cost cost) {
			return (deadline != null) ? this.store.tryConsume(client, limits, cost, deadline.endNanos())
					: this.store.tryConsume(client, limits, cost);
		}

		@Override
		public CompletableFuture<LeaseStore.Lease> lease(@Nullable Deadline deadline, ClientKey client,
				PlanLimits limits, long cost, long wanted, long durationMicros, LeaseStore.ReturnedLease previous) {
			if (this.store instanceof LeaseStore leases) {
				return (deadline != null)
						? leases.lease(client, limits, cost, wanted, durationMicros, previous, deadline.endNanos())
						: leases.lease(client, limits, cost, wanted, durationMicros, previous);
			}
			return StoreLayer.super.lease(deadline, client, limits, cost, wanted, durationMicros, previous);
		}

		@Override
		public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
			return this.store.refund(client, limits, cost);
		}

		@Override
		public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
			return this.store.reset(client, limits);
		}

		@Override
		public CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
			return this.store.readQuotas(client, limits);
		}

		@Override
		public CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota, long tokens) {
			return this.store.topUp(client, limits, quota, tokens);
		}

		@Override
		public String toString() {
			return this.store.toString();
		}

	}

}
