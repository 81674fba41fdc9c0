package io.github.ratelimit.gateway.chain;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.Phased;
import org.springframework.context.SmartLifecycle;

/**
 * The limiter chain as {@link LimiterChainBuilder} assembles it: one request in, one decision out, never an error.
 * Its life cycle gives the token leases back before the store stops; closing it stops its timer thread.
 *
 * <p>It listens to {@linkplain ClientChanges changes of clients} in the store: a client reset or topped up through
 * any instance loses its remembered denials, its token lease and its local fallback buckets in that group here; when
 * changes may have been missed, every remembered denial and lease is dropped. A reset or top-up through
 * {@link #store()} is applied here at once and then published.
 */
public final class DefaultLimiterChain implements LimiterChain, SmartLifecycle, AutoCloseable, ClientChangeListener {

	private static final Logger logger = LoggerFactory.getLogger(DefaultLimiterChain.class);

	private final LimiterChain front;

	private final @Nullable OverLimitCache overLimitCache;

	private final FailurePolicyLimiter policy;

	private final ScopedRateLimiter scoped;

	private final @Nullable LeasingRateLimiter leasing;

	private final ShardCircuitBreakers breakers;

	private final ClientChanges changes;

	private final RateLimitStore operatorStore;

	private final int phase;

	private volatile boolean running;

	DefaultLimiterChain(@Nullable OverLimitCache overLimitCache, FailurePolicyLimiter policy, ScopedRateLimiter scoped,
			@Nullable LeasingRateLimiter leasing, ShardCircuitBreakers breakers, RateLimitStore store,
			ClientChanges changes) {
		this.front = (overLimitCache != null) ? overLimitCache : policy;
		this.overLimitCache = overLimitCache;
		this.policy = policy;
		this.scoped = scoped;
		this.leasing = leasing;
		this.breakers = breakers;
		this.changes = changes;
		this.operatorStore = new OperatorStore();
		int below = (store instanceof Phased phased) ? phased.getPhase() : 0;
		this.phase = (below < Integer.MAX_VALUE) ? below + 1 : below;
	}

	@Override
	public CompletableFuture<RateLimitDecision> check(RateLimitRequest request) {
		return this.front.check(request);
	}

	/**
	 * The store as the chain's inner layers see it (both scopes, leases, the shards' breakers), for operator reads
	 * (cost 0), resets and top-ups; no failure policy. A reset or top-up the store confirmed is a
	 * {@linkplain ClientChange change of the client}: applied to this instance's state before the returned future
	 * completes, and published to every instance ({@link ClientChanges}); the future completes once the publication
	 * has (or could not be: logged at WARN, the change stands).
	 * @return the store's view
	 */
	public RateLimitStore store() {
		return this.operatorStore;
	}

	/**
	 * Drops the client's remembered denial, its lease (its unspent tokens go back) and its local fallback buckets
	 * (its own, not the group-wide ones) in the change's group.
	 */
	@Override
	public void clientChanged(ClientChange change) {
		if (this.overLimitCache != null) {
			this.overLimitCache.forget(change);
		}
		if (this.leasing != null) {
			this.leasing.forget(change);
		}
		this.policy.local().forget(change);
	}

	/**
	 * Drops every remembered denial and every lease (their unspent tokens go back): they only save store calls. The
	 * local fallback's counts stay: they are used only while the store is unavailable, and dropping them would give
	 * every client a second share of its quotas in the next outage.
	 */
	@Override
	public void changesMissed() {
		if (this.overLimitCache != null) {
			this.overLimitCache.clear();
		}
		if (this.leasing != null) {
			this.leasing.forgetAll();
		}
	}

	/**
	 * The over-limit cache.
	 * @return the cache, or {@code null} when {@code ratelimit.over-limit-cache.enabled=false}
	 */
	public @Nullable OverLimitCache overLimitCache() {
		return this.overLimitCache;
	}

	/**
	 * The token leases.
	 * @return the lease layer, or {@code null} when the store cannot lease
	 */
	public @Nullable LeasingRateLimiter leases() {
		return this.leasing;
	}

	/**
	 * The circuit breakers of the store's shards.
	 * @return the breakers
	 */
	public ShardCircuitBreakers circuitBreakers() {
		return this.breakers;
	}

	/**
	 * How requests that fail open are limited while the store is unavailable.
	 * @return the fallback mode
	 */
	public FallbackMode fallbackMode() {
		return this.policy.getMode();
	}

	@Override
	public void start() {
		this.running = true;
	}

	/** Gives the token leases back (waiting up to 2 s for the store), while the store still runs. */
	@Override
	public void stop() {
		this.running = false;
		if (this.leasing != null) {
			this.leasing.stop();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * One above the store's phase, so that the chain stops (and gives its leases back) while the store still runs.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return this.phase;
	}

	/** Stops the timer thread, and stops listening to the store's connections. */
	@Override
	public void close() {
		this.policy.close();
		this.breakers.close();
	}

	/**
	 * The layers, from the front end inwards.
	 * @return e.g. {@code OverLimitCache -> FailurePolicyLimiter -> ScopedRateLimiter -> LeasingRateLimiter ->
	 * ShardCircuitBreakers -> RedisRateLimitStore[...]}
	 */
	@Override
	public String toString() {
		return ((this.overLimitCache != null) ? "OverLimitCache -> " : "") + "FailurePolicyLimiter -> " + this.scoped;
	}

	/** A change the store confirmed: applied here, then published (its failure logged, never the caller's). */
	private <T> CompletableFuture<T> changed(CompletableFuture<T> confirmed, ClientKey client, PlanLimits limits) {
		return confirmed.thenCompose((result) -> {
			ClientChange change = ClientChange.of(client, limits.group());
			clientChanged(change);
			CompletableFuture<Void> published;
			try {
				published = this.changes.publish(change);
			}
			catch (RuntimeException ex) {
				published = CompletableFuture.failedFuture(ex);
			}
			return published.handle((ignored, ex) -> {
				if (ex != null) {
					logger.warn("Could not tell the other gateway instances that client {}:{} changed in group '{}' "
							+ "({}): their remembered denials of it last until their Retry-After (a quota's at most "
							+ "{})", change.kind().tag(), change.id(), change.group(), Futures.unwrap(ex).toString(),
							OverLimitCache.QUOTA_DENIAL_HOLD);
				}
				return result;
			});
		});
	}

	/** The store's view for operators: {@link #scoped}, with resets and top-ups as changes of the client. */
	private final class OperatorStore implements RateLimitStore {

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
			return DefaultLimiterChain.this.scoped.tryConsume(client, limits, cost);
		}

		@Override
		public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
			return DefaultLimiterChain.this.scoped.refund(client, limits, cost);
		}

		@Override
		public CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
			return DefaultLimiterChain.this.scoped.readQuotas(client, limits);
		}

		@Override
		public CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota,
				long tokens) {
			return changed(DefaultLimiterChain.this.scoped.topUp(client, limits, quota, tokens), client, limits);
		}

		@Override
		public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
			return changed(DefaultLimiterChain.this.scoped.reset(client, limits), client, limits);
		}

		@Override
		public String toString() {
			return DefaultLimiterChain.this.scoped.toString();
		}

	}

}
