package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Knows how many gateway instances share the limits, so that each instance's local fallback limiter holds the
 * right share. Each instance announces itself in Redis every heartbeat interval (a sorted set
 * {@code <prefix>:instances} scored by Redis time, script {@code META-INF/ratelimit/instances.lua}) and reads the
 * number alive (heard from within 3 intervals). The last count learned is kept while Redis is down; before any
 * count is learned, or with learning off, the configured {@code ratelimit.fallback.instances} applies.
 *
 * <p>Heartbeats run on a thread of their own ({@code ratelimit-instance-heartbeat}, a daemon) while started: the
 * template's calls block, and the first may open the Redis connection. {@link #stop()} interrupts a heartbeat in
 * progress (a connect included) and withdraws the instance, waiting at most 1 s for Redis.
 */
public class InstanceCounter implements SmartLifecycle {

	private static final Logger logger = LoggerFactory.getLogger(InstanceCounter.class);

	private static final String THREAD_NAME = "ratelimit-instance-heartbeat";

	private final StringRedisTemplate redis;

	private final RedisScript<Long> script = RedisScript.of(new ClassPathResource("META-INF/ratelimit/instances.lua"),
			Long.class);

	private final String key;

	private final String instanceId = UUID.randomUUID().toString();

	private final int configured;

	private final boolean learn;

	private final Duration interval;

	private final AtomicInteger learned = new AtomicInteger();

	private volatile @Nullable ScheduledExecutorService heartbeat;

	/**
	 * Create a counter.
	 * @param redis the template used for heartbeats
	 * @param keyPrefix prefix of the Redis keys
	 * @param configured the configured instance count (at least 1)
	 * @param learn whether to learn the count from heartbeats
	 * @param interval heartbeat interval
	 */
	public InstanceCounter(StringRedisTemplate redis, String keyPrefix, int configured, boolean learn,
			Duration interval) {
		this.redis = redis;
		this.key = keyPrefix + ":instances";
		this.configured = configured;
		this.learn = learn;
		this.interval = interval;
	}

	/**
	 * The number of instances sharing the limits: the last count learned from Redis, else the configured one.
	 * @return the count, at least 1
	 */
	public int instances() {
		int count = this.learned.get();
		return (count > 0) ? count : this.configured;
	}

	/**
	 * Whether the current count was learned from Redis (as opposed to configured).
	 * @return whether a count was learned
	 */
	public boolean isLearned() {
		return this.learned.get() > 0;
	}

	/**
	 * Send one heartbeat now, on the heartbeat thread while started, else on a thread of its own.
	 * @return the number of instances alive, as counted by Redis; completed exceptionally when Redis did not answer
	 */
	public CompletableFuture<Long> beat() {
		ScheduledExecutorService running = this.heartbeat;
		Executor thread = (running != null) ? running : InstanceCounter::startThread;
		return CompletableFuture.supplyAsync(this::send, thread);
	}

	/** One heartbeat, blocking. */
	private Long send() {
		String alive = Long.toString(this.interval.toMillis() * 3);
		Long count = this.redis.execute(this.script, List.of(this.key), this.instanceId, alive);
		if (count == null) {
			throw new IllegalStateException("No reply from the instances script");
		}
		int previous = this.learned.getAndSet(count.intValue());
		if (previous != count.intValue()) {
			logger.info("Rate limiter: {} gateway instance(s) share the limits", count);
		}
		return count;
	}

	private void heartbeat() {
		try {
			send();
		}
		catch (RuntimeException ex) {
			logger.debug("Instance heartbeat failed: {}", ex.toString());
		}
	}

	private static void startThread(Runnable task) {
		Thread thread = new Thread(task, THREAD_NAME);
		thread.setDaemon(true);
		thread.start();
	}

	@Override
	public void start() {
		if (!this.learn || this.heartbeat != null) {
			return;
		}
		ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, THREAD_NAME);
			thread.setDaemon(true);
			return thread;
		});
		// at a fixed rate: a heartbeat that takes longer than the interval delays the next, never runs beside it
		timer.scheduleAtFixedRate(this::heartbeat, 0, this.interval.toMillis(), TimeUnit.MILLISECONDS);
		this.heartbeat = timer;
	}

	@Override
	public void stop() {
		ScheduledExecutorService running = this.heartbeat;
		this.heartbeat = null;
		if (running != null) {
			running.shutdownNow(); // interrupts a heartbeat in progress, e.g. one waiting for a connect
		}
		if (running != null && isLearned()) { // never reached Redis: nothing to withdraw
			try {
				CompletableFuture.runAsync(() -> this.redis.opsForZSet().remove(this.key, this.instanceId),
						InstanceCounter::startThread)
					.get(1, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (Exception ex) {
				logger.debug("Instance withdrawal failed: {}", ex.toString());
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.heartbeat != null;
	}

}
