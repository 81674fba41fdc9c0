package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.Objects;
import java.util.function.IntSupplier;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Builds the limiter chain over a store. The layers, from the front end inwards: the {@linkplain OverLimitCache
 * over-limit cache} (optional), the failure policy (one deadline per check, fail open or closed, the local
 * fallback), the scopes (group-wide limits), the token leases (when the store is a {@link LeaseStore}), one circuit
 * breaker per {@linkplain StoreShards shard} of the store, and the store. Every setting has the default of its
 * {@code ratelimit.*} property.
 */
public final class LimiterChainBuilder {

	/**
	 * Name of the single shard's circuit breaker (standalone or Sentinel-managed Redis); on a Cluster each master has
	 * its own, {@code ratelimit-redis@host:port}.
	 */
	public static final String CIRCUIT_BREAKER_NAME = "ratelimit-redis";

	private final RateLimitStore store;

	private Duration timeout = Duration.ofMillis(20);

	private FallbackMode fallbackMode = FallbackMode.LOCAL;

	private long localMaxBuckets = 100_000;

	private IntSupplier instances = () -> 1;

	private long overLimitCacheEntries = 100_000;

	private boolean leases = true;

	private Duration leaseDuration = Duration.ofSeconds(1);

	private long leaseMaxEntries = 100_000;

	private @Nullable CircuitBreakerRegistry circuitBreakerRegistry;

	private CircuitBreakerConfig circuitBreakerConfig = CircuitBreakerConfig.ofDefaults();

	private CheckListener listener = CheckListener.NONE;

	private ClientChanges clientChanges = ClientChanges.NONE;

	private LimiterChainBuilder(RateLimitStore store) {
		this.store = store;
	}

	/**
	 * Start a chain over a store.
	 * @param store the shared store (the Redis one); its shards, if it is {@link StoreShards}, get a breaker each
	 * @return a builder with every setting at its default
	 */
	public static LimiterChainBuilder over(RateLimitStore store) {
		return new LimiterChainBuilder(Objects.requireNonNull(store, "store"));
	}

	/**
	 * The one deadline of every check ({@code ratelimit.redis-timeout}).
	 * @param timeout the longest wait for the store per check (positive)
	 * @return this builder
	 */
	public LimiterChainBuilder timeout(Duration timeout) {
		this.timeout = timeout;
		return this;
	}

	/**
	 * What requests that fail open get while the store is unavailable ({@code ratelimit.fallback.mode}).
	 * @param mode the fallback mode
	 * @return this builder
	 */
	public LimiterChainBuilder fallbackMode(FallbackMode mode) {
		this.fallbackMode = mode;
		return this;
	}

	/**
	 * The local fallback's size and share ({@code ratelimit.fallback.max-buckets}, {@code instances}).
	 * @param maxBuckets most client buckets kept (at least 1)
	 * @param instances the current number of gateway instances sharing the limits (at least 1)
	 * @return this builder
	 */
	public LimiterChainBuilder localFallback(long maxBuckets, IntSupplier instances) {
		this.localMaxBuckets = maxBuckets;
		this.instances = instances;
		return this;
	}

	/**
	 * The over-limit cache ({@code ratelimit.over-limit-cache.*}).
	 * @param enabled whether denials are remembered until their Retry-After
	 * @param maxEntries most denials remembered (at least 1)
	 * @return this builder
	 */
	public LimiterChainBuilder overLimitCache(boolean enabled, long maxEntries) {
		this.overLimitCacheEntries = enabled ? maxEntries : 0;
		return this;
	}

	/**
	 * The token leases ({@code ratelimit.leases.*}), used when the store is a {@link LeaseStore}.
	 * @param enabled whether limits with a {@code lease} budget take leases (else every check asks the store)
	 * @param duration how long a lease may be spent (positive)
	 * @param maxEntries most clients (per endpoint group) whose lease this instance keeps (at least 1)
	 * @return this builder
	 */
	public LimiterChainBuilder leases(boolean enabled, Duration duration, long maxEntries) {
		this.leases = enabled;
		this.leaseDuration = duration;
		this.leaseMaxEntries = maxEntries;
		return this;
	}

	/**
	 * The shards' circuit breakers ({@code ratelimit.circuit-breaker.*}).
	 * @param registry the registry breakers are found in or added to; {@code null} for one of the chain's own
	 * @param config the settings of breakers the registry does not hold yet
	 * @return this builder
	 */
	public LimiterChainBuilder circuitBreakers(@Nullable CircuitBreakerRegistry registry, CircuitBreakerConfig config) {
		this.circuitBreakerRegistry = registry;
		this.circuitBreakerConfig = config;
		return this;
	}

	/**
	 * Who is told of every check's duration and every store failure (the metrics).
	 * @param listener the listener ({@link CheckListener#NONE} for nobody)
	 * @return this builder
	 */
	public LimiterChainBuilder listener(CheckListener listener) {
		this.listener = listener;
		return this;
	}

	/**
	 * How changes of clients (an operator's reset or top-up) reach every instance's local state, and theirs this
	 * one's.
	 * @param changes the carrier ({@link ClientChanges#NONE}: changes stay on the instance that made them)
	 * @return this builder
	 */
	public LimiterChainBuilder clientChanges(ClientChanges changes) {
		this.clientChanges = Objects.requireNonNull(changes, "changes");
		return this;
	}

	/**
	 * Assemble the chain.
	 * @return the chain, {@linkplain ClientChanges#listen listening} to the changes of clients; close it to stop its
	 * timer thread
	 */
	public DefaultLimiterChain build() {
		Deadlines deadlines = new Deadlines(this.timeout);
		CircuitBreakerRegistry registry = (this.circuitBreakerRegistry != null) ? this.circuitBreakerRegistry
				: CircuitBreakerRegistry.of(this.circuitBreakerConfig);
		ShardCircuitBreakers breakers = new ShardCircuitBreakers(
				(this.store instanceof StoreShards shards) ? shards : null, registry, CIRCUIT_BREAKER_NAME,
				this.circuitBreakerConfig, deadlines, false);
		ShardCircuitBreakers.GuardedStore guarded = breakers.guard(this.store);
		LeasingRateLimiter leasing = (this.leases && this.store instanceof LeaseStore)
				? new LeasingRateLimiter(guarded, this.leaseDuration, this.leaseMaxEntries) : null;
		ScopedRateLimiter scoped = new ScopedRateLimiter((leasing != null) ? leasing : guarded);
		FailurePolicyLimiter policy = new FailurePolicyLimiter(scoped,
				new LocalFallbackLimiter(this.localMaxBuckets, this.instances), deadlines, this.fallbackMode,
				this.listener);
		OverLimitCache cache = (this.overLimitCacheEntries > 0)
				? new OverLimitCache(policy, this.overLimitCacheEntries, this.listener) : null;
		DefaultLimiterChain chain = new DefaultLimiterChain(cache, policy, scoped, leasing, breakers, this.store,
				this.clientChanges);
		this.clientChanges.listen(chain);
		return chain;
	}

}
