package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import org.springframework.context.Phased;
import org.springframework.context.SmartLifecycle;

/**
 * The limiter chain as {@link LimiterChainBuilder} assembles it: one request in, one decision out, never an error.
 * Its life cycle gives the token leases back before the store stops; closing it stops its timer thread.
 */
public final class DefaultLimiterChain implements LimiterChain, SmartLifecycle, AutoCloseable {

	private final LimiterChain front;

	private final @Nullable OverLimitCache overLimitCache;

	private final FailurePolicyLimiter policy;

	private final ScopedRateLimiter scoped;

	private final @Nullable LeasingRateLimiter leasing;

	private final ShardCircuitBreakers breakers;

	private final int phase;

	private volatile boolean running;

	DefaultLimiterChain(@Nullable OverLimitCache overLimitCache, FailurePolicyLimiter policy, ScopedRateLimiter scoped,
			@Nullable LeasingRateLimiter leasing, ShardCircuitBreakers breakers, RateLimitStore store) {
		this.front = (overLimitCache != null) ? overLimitCache : policy;
		this.overLimitCache = overLimitCache;
		this.policy = policy;
		this.scoped = scoped;
		this.leasing = leasing;
		this.breakers = breakers;
		int below = (store instanceof Phased phased) ? phased.getPhase() : 0;
		this.phase = (below < Integer.MAX_VALUE) ? below + 1 : below;
	}

	@Override
	public CompletableFuture<RateLimitDecision> check(RateLimitRequest request) {
		return this.front.check(request);
	}

	/**
	 * The store as the chain's inner layers see it (both scopes, leases, the shards' breakers), for operator reads
	 * (cost 0) and resets; no failure policy.
	 * @return the store's view
	 */
	public RateLimitStore store() {
		return this.scoped;
	}

	/**
	 * The over-limit cache.
	 * @return the cache, or {@code null} when {@code ratelimit.over-limit-cache.enabled=false}
	 */
	public @Nullable OverLimitCache overLimitCache() {
		return this.overLimitCache;
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

}
