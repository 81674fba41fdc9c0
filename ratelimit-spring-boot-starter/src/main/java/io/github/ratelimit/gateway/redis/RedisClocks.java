package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.github.ratelimit.gateway.chain.StoreShards;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's view of each shard's clock (standalone Redis: one; a Cluster: one per master, named as
 * {@link StoreShards} names them), so that a check can carry its deadline in Redis time: the script refuses a check
 * Redis runs after it (see {@code dispatch.lua}), and a check the gateway gave up on charges nothing however late
 * Redis runs it.
 *
 * <p>About once per {@link #SAMPLE_INTERVAL}, off the request path (a thread of its own,
 * {@code ratelimit-redis-clock}), it reads each shard's {@code TIME} through the store's executor
 * ({@link RedisScriptExecutor#time}), one read per shard at a time, and records the offset {@code redisMicros - localMicros}, local time being
 * {@link System#nanoTime()} when the reply was received. As Redis read its clock before the reply came, each sample
 * is a lower bound of the true offset; the estimate is the largest of the recent samples (so one slow reply does not
 * make it more conservative), those recorded within {@link #SAMPLE_LIFETIME} of the newest (so a Redis clock that
 * steps back is followed within that long). Without new samples (Redis unreachable) the estimate stays as it is.
 *
 * <p>The deadline sent for a gateway deadline {@code d} is {@code d + offset}, so Redis refuses a check at or before
 * the moment the gateway gives up on it, never later, up to the drift of the two clocks since the sample (ppm) and a
 * step back of Redis' clock since the newest sample. Until a shard's first sample, no deadline (0) is sent.
 * Thread-safe.
 */
final class RedisClocks implements AutoCloseable {

	/** How often each shard's clock is read. */
	static final Duration SAMPLE_INTERVAL = Duration.ofSeconds(1);

	/** How long a sample is kept after a newer one: the time within which a clock stepping back is followed. */
	static final Duration SAMPLE_LIFETIME = Duration.ofSeconds(20);

	/** Answers Redis' {@code TIME} in microseconds since the epoch (below 2^53: exact as a Lua number). */
	static final LuaScript TIME_SCRIPT = LuaScript.of(org.springframework.data.redis.core.script.RedisScript
		.of("local t = redis.call('TIME') return tonumber(t[1]) * 1000000 + tonumber(t[2])", Long.class));

	private final RedisScriptExecutor executor;

	private final LongSupplier nanoTime;

	private final Map<String, ShardClock> clocks = new ConcurrentHashMap<>();

	/** The single shard's clock, read without a map look-up (standalone Redis). */
	private final ShardClock single;

	private @Nullable ScheduledExecutorService sampler;

	/**
	 * @param executor reads the shards' clocks
	 */
	RedisClocks(RedisScriptExecutor executor) {
		this(executor, System::nanoTime);
	}

	/**
	 * @param executor reads the shards' clocks
	 * @param nanoTime the local monotonic clock ({@link System#nanoTime()}; tests give their own)
	 */
	RedisClocks(RedisScriptExecutor executor, LongSupplier nanoTime) {
		this.executor = executor;
		this.nanoTime = nanoTime;
		this.single = new ShardClock(SAMPLE_LIFETIME);
		this.clocks.put(StoreShards.SINGLE_SHARD, this.single);
	}

	/**
	 * A gateway deadline in a shard's time.
	 * @param shard the shard the call goes to ({@link StoreShards#SINGLE_SHARD} when Redis is not split)
	 * @param deadlineNanos the gateway's deadline, in {@link System#nanoTime()} time
	 * @return the deadline in the shard's time (microseconds since the epoch, at or before the shard's time at the
	 * gateway's deadline, see the class description), or 0 when the shard's clock has not been read yet
	 */
	long deadlineMicros(String shard, long deadlineNanos) {
		ShardClock clock = StoreShards.SINGLE_SHARD.equals(shard) ? this.single : this.clocks.get(shard);
		return (clock != null) ? clock.redisMicros(deadlineNanos) : 0;
	}

	/** Start reading the shards' clocks, the first time now. */
	synchronized void start() {
		if (this.sampler != null) {
			return;
		}
		ScheduledThreadPoolExecutor sampler = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "ratelimit-redis-clock");
			thread.setDaemon(true);
			return thread;
		});
		sampler.setRemoveOnCancelPolicy(true);
		sampler.scheduleWithFixedDelay(this::sample, 0, SAMPLE_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
		this.sampler = sampler;
	}

	/** Stop reading them (the estimates are kept). */
	synchronized void stop() {
		if (this.sampler != null) {
			this.sampler.shutdownNow();
			this.sampler = null;
		}
	}

	@Override
	public void close() {
		stop();
	}

	/** Read every shard's clock whose previous read has answered. Never throws. */
	void sample() {
		try {
			for (String shard : this.executor.shards()) {
				ShardClock clock = this.clocks.computeIfAbsent(shard, (name) -> new ShardClock(SAMPLE_LIFETIME));
				if (clock.reading) {
					continue; // the previous read is still out (Redis slow or unreachable)
				}
				clock.reading = true;
				this.executor.time(shard).whenComplete((micros, error) -> {
					long received = this.nanoTime.getAsLong();
					clock.reading = false;
					if (error == null && micros != null) {
						clock.record(micros, received);
					}
				});
			}
		}
		catch (RuntimeException ex) {
			// an executor that breaks its contract: the next round tries again
		}
	}

	@Override
	public String toString() {
		return "RedisClocks" + this.clocks;
	}

	/**
	 * One shard's clock as the gateway sees it: the largest offset among the samples recorded within the lifetime of
	 * the newest one (two windows of half the lifetime each: a sample counts until the window after its own ends).
	 */
	static final class ShardClock {

		private static final long UNKNOWN = Long.MIN_VALUE;

		private final long windowNanos;

		/** The estimate, Redis micros less local micros; {@link #UNKNOWN} before the first sample. */
		private volatile long offsetMicros = UNKNOWN;

		/** Whether a read of this shard's clock is out. */
		volatile boolean reading;

		// guarded by this
		private long windowStart;

		private long windowBest = UNKNOWN;

		private long previousBest = UNKNOWN;

		ShardClock(Duration lifetime) {
			this.windowNanos = Math.max(1, lifetime.toNanos() / 2);
		}

		/**
		 * Record a sample.
		 * @param redisMicros the shard's {@code TIME}, microseconds since the epoch
		 * @param receivedNanos {@link System#nanoTime()} when its reply was received
		 */
		synchronized void record(long redisMicros, long receivedNanos) {
			// local micros rounded up, so the sample stays a lower bound of the offset
			long offset = redisMicros - -Math.floorDiv(-receivedNanos, 1000);
			long sinceWindow = receivedNanos - this.windowStart;
			if (this.windowBest == UNKNOWN || sinceWindow >= this.windowNanos) {
				this.previousBest = (this.windowBest != UNKNOWN && sinceWindow < 2 * this.windowNanos)
						? this.windowBest : UNKNOWN;
				this.windowStart = receivedNanos;
				this.windowBest = offset;
			}
			else if (offset > this.windowBest) {
				this.windowBest = offset;
			}
			this.offsetMicros = Math.max(this.windowBest, this.previousBest);
		}

		/**
		 * A local time in the shard's time.
		 * @param nanos a {@link System#nanoTime()} time
		 * @return microseconds since the epoch (at least 1), or 0 before the first sample
		 */
		long redisMicros(long nanos) {
			long offset = this.offsetMicros;
			return (offset == UNKNOWN) ? 0 : Math.max(1, Math.floorDiv(nanos, 1000) + offset);
		}

		@Override
		public String toString() {
			long offset = this.offsetMicros;
			return (offset == UNKNOWN) ? "unknown" : "offset " + offset + " us";
		}

	}

}
