package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;

/**
 * One Resilience4j circuit breaker per {@linkplain StoreShards shard} of the shared store, so that a failed Redis
 * Cluster master sends only its own clients to the fallback while every other client keeps exact decisions from
 * Redis. A store that is not split (standalone or Sentinel-managed Redis) has one shard and so one breaker, as before.
 *
 * <p>The breakers sit right over the store ({@link #guard}): every call to the store (a check, a lease, a refund, a
 * reset) goes through the breaker of the shard it is sent to, and its outcome is recorded there. While a shard's
 * breaker is open its calls fail at once with {@link CallNotPermittedException} and the
 * {@linkplain FailurePolicyLimiter failure policy} above decides them (fallback, or 503 on critical routes). A call
 * with no answer within the timeout counts as failed when the timeout elapses (the answer, if it comes later, is not
 * counted again); the call itself is left to the layers above, which time the request out.
 *
 * <p>Recovery without relapse: Resilience4j evaluates the failure rate on successes too, so failures of an outage
 * too short to open the breaker (fewer than {@code minimum-number-of-calls}) could open it on the first success after
 * the store is back. Here a breaker never opens on a success: a success that would open a closed breaker resets it
 * first (the failures before it are of an outage that has ended), so breakers open only on failures.
 *
 * <p>Breakers are found in or added to a Resilience4j registry on first use, named {@code ratelimit-redis} for the
 * single shard and {@code ratelimit-redis@host:port} per Cluster master (the auto-configuration uses the application's
 * {@code CircuitBreakerRegistry} when it has one); a shard's breaker is kept while the process runs (a Cluster has few
 * masters, and a master that comes back finds its breaker again).
 */
public class ShardCircuitBreakers implements AutoCloseable {

	private static final AtomicIntegerFieldUpdater<GuardedCall> STATE = AtomicIntegerFieldUpdater
		.newUpdater(GuardedCall.class, "state");

	private static final int PENDING = 0;

	private static final int RECORDED = 1;

	private final StoreShards shards;

	private final CircuitBreakerRegistry registry;

	private final String name;

	private final CircuitBreakerConfig config;

	private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();

	private final Duration timeout;

	private final long timeoutNanos;

	private final Timer timer;

	/**
	 * Create the breakers of a store's shards.
	 * @param shards the store's shards; {@code null} for a store that is not split (one shard,
	 * {@link StoreShards#SINGLE_SHARD})
	 * @param registry the registry breakers are found in or added to (so its metrics and events cover them)
	 * @param name the single shard's breaker name; a Cluster master's breaker is named {@code name@host:port}
	 * @param config the settings of breakers the registry does not hold yet
	 * @param timeout longest wait for a store call before it counts as failed (positive; the failure policy's
	 * {@code redis-timeout})
	 */
	public ShardCircuitBreakers(StoreShards shards, CircuitBreakerRegistry registry, String name,
			CircuitBreakerConfig config, Duration timeout) {
		this.shards = (shards != null) ? shards : SingleShard.INSTANCE;
		this.registry = registry;
		this.name = name;
		this.config = config;
		this.timeout = timeout;
		this.timeoutNanos = timeout.toNanos();
		this.timer = CheckTimer.newTimer(timeout, "ratelimit-shard-timeouts");
		// the single shard's breaker exists from the start (in the registry, for its meters); it also takes the calls
		// made before a Cluster's topology is known
		breaker(StoreShards.SINGLE_SHARD);
	}

	/**
	 * The store with every call guarded by its shard's breaker.
	 * @param store the store (the Redis one); its lease calls are guarded too when it is a {@link LeaseStore}
	 * @return the guarded store; its {@code lease} fails with {@link UnsupportedOperationException} when the store
	 * cannot lease
	 */
	public GuardedStore guard(ClientRateLimiter store) {
		return new GuardedStore(store);
	}

	/**
	 * The breaker of a shard, made on first use.
	 * @param shard the shard's name, as {@link StoreShards#shardOf} gives it
	 * @return the breaker
	 */
	public CircuitBreaker breaker(String shard) {
		CircuitBreaker breaker = this.breakers.get(shard);
		return (breaker != null) ? breaker : this.breakers.computeIfAbsent(shard, this::find);
	}

	private CircuitBreaker find(String shard) {
		String breakerName = StoreShards.SINGLE_SHARD.equals(shard) ? this.name : this.name + "@" + shard;
		return this.registry.find(breakerName).orElseGet(() -> this.registry.circuitBreaker(breakerName, this.config));
	}

	/**
	 * The registry holding the breakers.
	 * @return the registry
	 */
	public CircuitBreakerRegistry getRegistry() {
		return this.registry;
	}

	/**
	 * The breakers of the shards serving buckets now, by shard name in name order (for health reports and tests).
	 * @return shard name to breaker; one entry, {@link StoreShards#SINGLE_SHARD}, for a store that is not split
	 */
	public Map<String, CircuitBreaker> current() {
		Map<String, CircuitBreaker> current = new LinkedHashMap<>();
		for (String shard : new TreeSet<>(this.shards.shards())) {
			current.put(shard, breaker(shard));
		}
		return current;
	}

	/**
	 * Whether the store is split into shards that fail on their own (a Redis Cluster).
	 * @return {@code false} for a single shard
	 */
	public boolean isSharded() {
		Set<String> all = this.shards.shards();
		return !(all.size() == 1 && all.contains(StoreShards.SINGLE_SHARD));
	}

	/** Stop the timer thread. */
	@Override
	public void close() {
		this.timer.stop();
	}

	private <T> CompletableFuture<T> call(ClientKey client, PlanLimits limits, Supplier<CompletableFuture<T>> call) {
		CircuitBreaker breaker = breaker(this.shards.shardOf(client, limits));
		if (!breaker.tryAcquirePermission()) {
			return CompletableFuture.failedFuture(CallNotPermittedException.createCallNotPermittedException(breaker));
		}
		GuardedCall<T> guarded = new GuardedCall<>(breaker);
		CompletableFuture<T> future = Futures.call(call);
		if (!future.isDone()) {
			guarded.timeout = this.timer.newTimeout(guarded, this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
		// the caller's callbacks run after the outcome is recorded
		return future.whenComplete(guarded);
	}

	/**
	 * Record a success, resetting a closed breaker first if this success would open it (see the class comment).
	 * @param breaker the breaker
	 * @param nanos the call's duration
	 */
	static void recordSuccess(CircuitBreaker breaker, long nanos) {
		if (breaker.getState() == CircuitBreaker.State.CLOSED && successWouldOpen(breaker)) {
			breaker.reset();
		}
		breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Whether recording one more success could bring a closed breaker's failure rate to its threshold: only when the
	 * window reaches its minimum number of calls with that success and holds mostly failures (a count-based window
	 * that is full may drop a failure instead; counted as still failed, so this may say yes where Resilience4j would
	 * stay closed: the reset is then harmless).
	 */
	private static boolean successWouldOpen(CircuitBreaker breaker) {
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		CircuitBreakerConfig config = breaker.getCircuitBreakerConfig();
		int failed = metrics.getNumberOfFailedCalls();
		if (failed == 0) {
			return false;
		}
		int calls = metrics.getNumberOfBufferedCalls() + 1;
		if (calls < config.getMinimumNumberOfCalls()) {
			return false;
		}
		if (config.getSlidingWindowType() == CircuitBreakerConfig.SlidingWindowType.COUNT_BASED) {
			calls = Math.min(calls, config.getSlidingWindowSize());
		}
		return failed * 100f >= config.getFailureRateThreshold() * calls;
	}

	/**
	 * The store with every call guarded by the breaker of the shard it goes to. Implements {@link LeaseStore} so that
	 * the token lease layer can sit over it; {@code lease} is only called when the store leases.
	 */
	public final class GuardedStore implements ClientRateLimiter, LeaseStore {

		private final ClientRateLimiter store;

		private GuardedStore(ClientRateLimiter store) {
			this.store = store;
		}

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost) {
			return call(client, limits, () -> this.store.tryConsume(client, limits, cost));
		}

		@Override
		public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
				long durationMicros, ReturnedLease previous) {
			if (!(this.store instanceof LeaseStore leases)) {
				return CompletableFuture.failedFuture(
						new UnsupportedOperationException(this.store + " cannot lease tokens"));
			}
			return call(client, limits, () -> leases.lease(client, limits, cost, wanted, durationMicros, previous));
		}

		@Override
		public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, long cost) {
			return call(client, limits, () -> this.store.refund(client, limits, cost));
		}

		@Override
		public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
			return call(client, limits, () -> this.store.reset(client, limits));
		}

		/**
		 * The store guarded.
		 * @return the store
		 */
		public ClientRateLimiter getStore() {
			return this.store;
		}

		@Override
		public String toString() {
			return "ShardCircuitBreakers.GuardedStore[" + this.store + "]";
		}

	}

	/** One guarded call: its outcome is recorded once, by its answer or by the timeout, whichever comes first. */
	private final class GuardedCall<T> implements BiConsumer<T, Throwable>, TimerTask {

		private final CircuitBreaker breaker;

		private final long start = System.nanoTime();

		volatile int state = PENDING;

		volatile Timeout timeout;

		GuardedCall(CircuitBreaker breaker) {
			this.breaker = breaker;
		}

		@Override
		public void accept(T result, Throwable error) {
			if (STATE.compareAndSet(this, PENDING, RECORDED)) {
				Timeout timer = this.timeout;
				if (timer != null) {
					timer.cancel();
				}
				long elapsed = System.nanoTime() - this.start;
				if (error != null) {
					this.breaker.onError(elapsed, TimeUnit.NANOSECONDS, Futures.unwrap(error));
				}
				else {
					recordSuccess(this.breaker, elapsed);
				}
			}
		}

		@Override
		public void run(Timeout expired) {
			if (STATE.compareAndSet(this, PENDING, RECORDED)) {
				this.breaker.onError(System.nanoTime() - this.start, TimeUnit.NANOSECONDS,
						new TimeoutException("No answer from the store within " + ShardCircuitBreakers.this.timeout));
			}
		}

	}

	/** A store that is not split. */
	private enum SingleShard implements StoreShards {

		INSTANCE;

		private static final Set<String> ALL = Set.of(SINGLE_SHARD);

		@Override
		public String shardOf(ClientKey client, PlanLimits limits) {
			return SINGLE_SHARD;
		}

		@Override
		public Set<String> shards() {
			return ALL;
		}

	}

}
