package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
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
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import org.jspecify.annotations.Nullable;

/**
 * One Resilience4j circuit breaker per {@linkplain StoreShards shard} of the shared store (a Redis Cluster master;
 * one for standalone or Sentinel-managed Redis), right over the store.
 *
 * <ul>
 * <li>Every call to the store (a check, a lease, a reset) goes through the breaker of the shard it is sent to, and
 * its outcome is recorded there; a refund is always sent, whatever the breaker's state, and not recorded. While a
 * shard's breaker is open its calls fail at once with {@link CallNotPermittedException}.</li>
 * <li>A call of a check waits on the check's deadline (the failure policy's): when it passes with the call still
 * out, the call is recorded as failed, before the policy decides; a later answer is not recorded again. A call made
 * outside a check waits on a deadline of its own, of the same length.</li>
 * <li>A closed breaker opens only on a failure: a success that would open it resets it first. A half-open breaker
 * does not take as its trial a call the store's client refused unsent while reconnecting
 * ({@link StoreShards#refusedWhileReconnecting}); such a call fails and the breaker stays half-open. Nor does a
 * breaker in any state count such a call as failed while the store reports another of its connections to the
 * shard established ({@link StoreShards#connectedTo}): the call fails, and nothing is recorded.</li>
 * <li>When the store's client reports a (re-)established connection to a shard ({@link StoreShards#onConnected}),
 * that shard's open breaker (and, on a Cluster, the single shard's) goes half-open at once.</li>
 * <li>Breakers are found in or added to a Resilience4j registry on first use, named {@code ratelimit-redis} for the
 * single shard and {@code ratelimit-redis@host:port} per Cluster master; when a new master appears, the closed
 * breakers of masters no longer in the topology are dropped, from the registry too.</li>
 * </ul>
 * Why: {@code src/docs/design/limiter-chain.md}.
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

	private final Map<String, Shard> breakers = new ConcurrentHashMap<>();

	/** Times the calls made outside a check (a reset, a lease given back); a check's calls wait on its deadline. */
	private final Deadlines deadlines;

	/** Whether {@link #deadlines} is this object's own, to close with it. */
	private final boolean ownDeadlines;

	/** Stops the store's calls of {@link #connected}. */
	private final AutoCloseable connectedListener;

	/**
	 * Create the breakers of a store's shards, with a timer of their own for calls made outside a check (tests).
	 * @param shards the store's shards; {@code null} for a store that is not split (one shard,
	 * {@link StoreShards#SINGLE_SHARD})
	 * @param registry the registry breakers are found in or added to (so its metrics and events cover them)
	 * @param name the single shard's breaker name; a Cluster master's breaker is named {@code name@host:port}
	 * @param config the settings of breakers the registry does not hold yet
	 * @param timeout longest wait for a store call made outside a check before it counts as failed (positive)
	 */
	ShardCircuitBreakers(@Nullable StoreShards shards, CircuitBreakerRegistry registry, String name,
			CircuitBreakerConfig config, Duration timeout) {
		this(shards, registry, name, config, new Deadlines(timeout), true);
	}

	/**
	 * Create the breakers of a store's shards.
	 * @param shards the store's shards; {@code null} for a store that is not split
	 * @param registry the registry breakers are found in or added to
	 * @param name the single shard's breaker name
	 * @param config the settings of breakers the registry does not hold yet
	 * @param deadlines the failure policy's deadlines, timing the calls made outside a check
	 * @param ownDeadlines whether to close {@code deadlines} with this object
	 */
	ShardCircuitBreakers(@Nullable StoreShards shards, CircuitBreakerRegistry registry, String name,
			CircuitBreakerConfig config, Deadlines deadlines, boolean ownDeadlines) {
		this.shards = (shards != null) ? shards : SingleShard.INSTANCE;
		this.registry = registry;
		this.name = name;
		this.config = config;
		this.deadlines = deadlines;
		this.ownDeadlines = ownDeadlines;
		// the single shard's breaker exists from the start (in the registry, for its meters); it also takes the calls
		// made before a Cluster's topology is known
		breaker(StoreShards.SINGLE_SHARD);
		this.connectedListener = this.shards.onConnected(this::connected);
	}

	/**
	 * The store's client has established a connection to a shard: its open breaker (and, on a Cluster, the single
	 * shard's) goes half-open. Runs on the client's I/O thread; never throws.
	 * @param shard the shard's name
	 */
	private void connected(String shard) {
		Shard connectedTo = this.breakers.get(shard);
		if (connectedTo != null) {
			connectedTo.connected();
		}
		if (!StoreShards.SINGLE_SHARD.equals(shard)) {
			Shard single = this.breakers.get(StoreShards.SINGLE_SHARD);
			if (single != null) {
				single.connected();
			}
		}
	}

	/**
	 * The store with every call guarded by its shard's breaker.
	 * @param store the store (the Redis one); its lease calls are guarded too when it is a {@link LeaseStore}
	 * @return the guarded store; its {@code lease} fails with {@link UnsupportedOperationException} when the store
	 * cannot lease
	 */
	GuardedStore guard(RateLimitStore store) {
		return new GuardedStore(store);
	}

	/**
	 * The breaker of a shard, made on first use.
	 * @param shard the shard's name, as {@link StoreShards#shardOf} gives it
	 * @return the breaker
	 */
	public CircuitBreaker breaker(String shard) {
		return shard(shard).breaker;
	}

	private Shard shard(String name) {
		Shard shard = this.breakers.get(name);
		if (shard != null) {
			return shard;
		}
		shard = this.breakers.computeIfAbsent(name, this::find);
		dropDeparted();
		return shard;
	}

	private Shard find(String shard) {
		String breakerName = breakerName(shard);
		return new Shard(shard,
				this.registry.find(breakerName).orElseGet(() -> this.registry.circuitBreaker(breakerName, this.config)));
	}

	private String breakerName(String shard) {
		return StoreShards.SINGLE_SHARD.equals(shard) ? this.name : this.name + "@" + shard;
	}

	/** Drop the closed breakers of masters no longer in the topology (not the single shard's). */
	private void dropDeparted() {
		Set<String> current = this.shards.shards();
		for (Map.Entry<String, Shard> entry : this.breakers.entrySet()) {
			String shard = entry.getKey();
			CircuitBreaker breaker = entry.getValue().breaker;
			if (!StoreShards.SINGLE_SHARD.equals(shard) && !current.contains(shard)
					&& breaker.getState() == CircuitBreaker.State.CLOSED
					&& this.breakers.remove(shard, entry.getValue())) {
				this.registry.remove(breaker.getName());
			}
		}
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
	 * @return shard name to breaker; one entry, {@link StoreShards#SINGLE_SHARD}, for a store that is not split (on a
	 * Cluster the single shard's breaker too while it is not closed: it takes the calls for slots no master serves)
	 */
	public Map<String, CircuitBreaker> current() {
		Map<String, CircuitBreaker> current = new LinkedHashMap<>();
		Set<String> shards = new TreeSet<>(this.shards.shards());
		CircuitBreaker single = breaker(StoreShards.SINGLE_SHARD);
		if (single.getState() != CircuitBreaker.State.CLOSED) {
			// on a Cluster: the calls made before the topology was known, or for a slot no master serves
			shards.add(StoreShards.SINGLE_SHARD);
		}
		for (String shard : shards) {
			current.put(shard, breaker(shard));
		}
		dropDeparted();
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

	/** Stop listening to the store's connections (and stop the timer, if it is this object's own). */
	@Override
	public void close() {
		if (this.ownDeadlines) {
			this.deadlines.close();
		}
		try {
			this.connectedListener.close();
		}
		catch (Exception ex) {
			// nothing held: the store's listener is dropped with the store
		}
	}

	private <T> CompletableFuture<T> call(@Nullable Deadline deadline, ClientKey client, PlanLimits limits,
			Supplier<CompletableFuture<T>> call) {
		Shard shard = shard(this.shards.shardOf(client, limits));
		if (!shard.breaker.tryAcquirePermission()) {
			return CompletableFuture
				.failedFuture(CallNotPermittedException.createCallNotPermittedException(shard.breaker));
		}
		GuardedCall<T> guarded = new GuardedCall<>(shard, deadline);
		CompletableFuture<T> future = Futures.call(call);
		if (!future.isDone()) {
			guarded.waitOn(deadline);
		}
		// the caller's callbacks run after the outcome is recorded
		return future.whenComplete(guarded);
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
	final class GuardedStore implements StoreLayer, LeaseStore {

		private final RateLimitStore store;

		private GuardedStore(RateLimitStore store) {
			this.store = store;
		}

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(@Nullable Deadline deadline, ClientKey client,
				PlanLimits limits, Cost cost) {
			return call(deadline, client, limits, (deadline != null)
					? () -> this.store.tryConsume(client, limits, cost, deadline.endNanos())
					: () -> this.store.tryConsume(client, limits, cost));
		}

		@Override
		public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
				long durationMicros, ReturnedLease previous) {
			return lease(null, client, limits, cost, wanted, durationMicros, previous);
		}

		@Override
		public CompletableFuture<Lease> lease(@Nullable Deadline deadline, ClientKey client, PlanLimits limits,
				long cost, long wanted, long durationMicros, ReturnedLease previous) {
			if (!(this.store instanceof LeaseStore leases)) {
				return StoreLayer.super.lease(deadline, client, limits, cost, wanted, durationMicros, previous);
			}
			return call(deadline, client, limits, (deadline != null)
					? () -> leases.lease(client, limits, cost, wanted, durationMicros, previous, deadline.endNanos())
					: () -> leases.lease(client, limits, cost, wanted, durationMicros, previous));
		}

		/** Sent whatever the breaker's state (see the class comment); its outcome is not recorded. */
		@Override
		public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
			return this.store.refund(client, limits, cost);
		}

		@Override
		public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
			return call(null, client, limits, () -> this.store.reset(client, limits));
		}

		@Override
		public CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
			return call(null, client, limits, () -> this.store.readQuotas(client, limits));
		}

		@Override
		public CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota, long tokens) {
			return call(null, client, limits, () -> this.store.topUp(client, limits, quota, tokens));
		}

		@Override
		public String toString() {
			return "ShardCircuitBreakers -> " + this.store;
		}

	}

	/**
	 * One guarded call: its outcome is recorded once, by its answer or when the deadline it waits on passes,
	 * whichever comes first; its duration is measured from its check's start.
	 */
	private final class GuardedCall<T> implements BiConsumer<T, Throwable>, Runnable {

		private final Shard shard;

		private final long start;

		/** The shard's {@link Shard#connections} when the call was sent. */
		private final int connectionsAtStart;

		volatile int state = PENDING;

		/** A deadline of the call's own (made outside a check, or after its check's deadline passed). */
		private volatile @Nullable Deadline own;

		GuardedCall(Shard shard, @Nullable Deadline check) {
			this.shard = shard;
			this.start = (check != null) ? check.startNanos() : System.nanoTime();
			this.connectionsAtStart = shard.connections;
		}

		/** Wait on the check's deadline; a call outside a check, or after its deadline, on one of its own. */
		void waitOn(@Nullable Deadline check) {
			if (check != null && check.onPassed(this)) {
				return;
			}
			Deadline deadline = ShardCircuitBreakers.this.deadlines.startedAt(this.start);
			this.own = deadline;
			deadline.onPassed(this);
			deadline.schedule(null);
		}

		@Override
		public void accept(T result, Throwable error) {
			if (STATE.compareAndSet(this, PENDING, RECORDED)) {
				Deadline deadline = this.own;
				if (deadline != null) {
					deadline.cancel();
				}
				long elapsed = System.nanoTime() - this.start;
				if (error != null) {
					Throwable cause = Futures.unwrap(error);
					StoreShards shards = ShardCircuitBreakers.this.shards;
					if (shards.refusedWhileReconnecting(cause)
							&& (this.shard.breaker.getState() == CircuitBreaker.State.HALF_OPEN
									|| shards.connectedTo(this.shard.name))) {
						// not a trial: the trial is the first call sent once the connection is back; and not a
						// failure while another connection to the shard is established (this one is still reconnecting)
						this.shard.breaker.releasePermission();
					}
					else {
						this.shard.onError(elapsed, cause);
						if (this.shard.connections != this.connectionsAtStart
								&& ShardCircuitBreakers.this.shards.refusedWhileReconnecting(cause)) {
							// refused before the connection came back, recorded after it: no wait for an outage over
							this.shard.connected();
						}
					}
				}
				else {
					this.shard.onSuccess(elapsed);
				}
			}
		}

		/** The deadline passed (on a pool thread, before the failure policy decides without the store). */
		@Override
		public void run() {
			if (STATE.compareAndSet(this, PENDING, RECORDED)) {
				this.shard.onError(System.nanoTime() - this.start, new TimeoutException("No answer from the store within "
						+ ShardCircuitBreakers.this.deadlines.timeout()));
			}
		}

	}

	/**
	 * A shard's breaker and whether failures are on its record since its last success: a success with none (the usual
	 * case) is recorded without reading the breaker's metrics or taking its lock.
	 */
	static final class Shard {

		/** The shard's name, as {@link StoreShards#shardOf} gives it. */
		final String name;

		final CircuitBreaker breaker;

		private volatile boolean failuresOnRecord;

		/** Connections established to the shard so far (written on the store client's I/O thread). */
		volatile int connections;

		Shard(String name, CircuitBreaker breaker) {
			this.name = name;
			this.breaker = breaker;
		}

		/** A connection to the shard is established: an open breaker goes half-open. */
		@SuppressWarnings("NonAtomicOperationOnVolatileField") // a change marker: a lost increment still changes it
		void connected() {
			this.connections++;
			if (this.breaker.getState() == CircuitBreaker.State.OPEN) {
				try {
					this.breaker.transitionToHalfOpenState();
				}
				catch (IllegalStateTransitionException ex) {
					// it left the open state meanwhile (its wait ended): nothing to do
				}
			}
		}

		void onError(long nanos, Throwable error) {
			synchronized (this) {
				this.failuresOnRecord = true;
				this.breaker.onError(nanos, TimeUnit.NANOSECONDS, error);
			}
		}

		/** Record a success, resetting a closed breaker first if this success would open it. */
		void onSuccess(long nanos) {
			if (!this.failuresOnRecord) {
				this.breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
				return;
			}
			synchronized (this) {
				if (this.breaker.getState() == CircuitBreaker.State.CLOSED && successWouldOpen(this.breaker)) {
					this.breaker.reset();
				}
				this.breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
				this.failuresOnRecord = this.breaker.getMetrics().getNumberOfFailedCalls() > 0;
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
