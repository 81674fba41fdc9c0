package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Knows how many gateway instances share the limits, so that each instance's local fallback limiter holds the
 * right share. Each instance announces itself in Redis every heartbeat interval (a sorted set
 * {@code <prefix>:instances} scored by Redis time, script {@code META-INF/ratelimit/instances.lua}) and reads the
 * number alive (heard from within 3 intervals). The last count learned is kept while Redis is down; before any
 * count is learned, or with learning off, the configured {@code ratelimit.fallback.instances} applies.
 *
 * <p>While started (and learning), a heartbeat is sent at once and then every interval from one daemon thread,
 * {@code ratelimit-heartbeat}, which never waits for Redis: a heartbeat still unanswered when the next is due
 * counts as failed, and the next is sent. A failed heartbeat is logged at DEBUG, without a stack trace.
 * {@link #stop()} ends that thread and, if a heartbeat was sent, withdraws the instance ({@code ZREM}), waiting at
 * most 1 s for Redis, and only if Redis has answered a heartbeat. The executor is the counter's: started and
 * stopped with it, closed by {@link #close()}.
 */
public class InstanceCounter implements SmartLifecycle, AutoCloseable {

	/** Longest {@link #stop()} waits for Redis to withdraw the instance. */
	static final Duration WITHDRAW_TIMEOUT = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(InstanceCounter.class);

	private static final LuaScript SCRIPT = LuaScript.fromClassPath("META-INF/ratelimit/instances.lua");

	private final RedisScriptExecutor redis;

	private final byte[][] key;

	private final String instanceId = UUID.randomUUID().toString();

	private final byte[][] arguments;

	private final int configured;

	private final boolean learn;

	private final Duration interval;

	private final AtomicInteger learned = new AtomicInteger();

	private volatile @Nullable ScheduledExecutorService heartbeat;

	/** The last heartbeat the heartbeat thread sent (written on that thread only). */
	private volatile @Nullable CompletableFuture<Long> lastHeartbeat;

	/**
	 * Create a counter.
	 * @param redis reaches Redis (e.g. a {@link LettuceScriptExecutor}); owned by the counter from now on
	 * @param keyPrefix prefix of the Redis keys
	 * @param configured the configured instance count (at least 1)
	 * @param learn whether to learn the count from heartbeats
	 * @param interval heartbeat interval (positive)
	 */
	public InstanceCounter(RedisScriptExecutor redis, String keyPrefix, int configured, boolean learn,
			Duration interval) {
		this.redis = redis;
		this.key = new byte[][] { utf8(keyPrefix + ":instances") };
		this.arguments = new byte[][] { utf8(this.instanceId), utf8(Long.toString(interval.toMillis() * 3)) };
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
	 * Send one heartbeat now; never blocks.
	 * @return the number of instances alive, as counted by Redis; completed exceptionally when Redis did not answer
	 */
	public CompletableFuture<Long> beat() {
		return this.redis.eval(SCRIPT, this.key, this.arguments).thenApply((reply) -> {
			long count = (Long) reply.get(0);
			int previous = this.learned.getAndSet((int) count);
			if (previous != count) {
				logger.info("Rate limiter: {} gateway instance(s) share the limits", count);
			}
			return count;
		});
	}

	/** One tick of the heartbeat thread: the heartbeat before, if still unanswered, fails; a new one is sent. */
	private void tick() {
		CompletableFuture<Long> previous = this.lastHeartbeat;
		if (previous != null) {
			previous.completeExceptionally(new TimeoutException("no answer within " + this.interval));
		}
		CompletableFuture<Long> sent = beat();
		sent.whenComplete((count, ex) -> {
			if (ex != null) {
				logger.debug("Instance heartbeat failed: {}", LettuceScriptConnection.unwrap(ex).toString());
			}
		});
		this.lastHeartbeat = sent;
	}

	@Override
	public void start() {
		if (!this.learn || this.heartbeat != null) {
			return;
		}
		if (this.redis instanceof Lifecycle lifecycle) {
			lifecycle.start();
		}
		ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread daemon = new Thread(task, "ratelimit-heartbeat");
			daemon.setDaemon(true);
			return daemon;
		});
		thread.scheduleWithFixedDelay(this::tick, 0, this.interval.toMillis(), TimeUnit.MILLISECONDS);
		this.heartbeat = thread;
	}

	/**
	 * Ends the heartbeats, withdraws the instance if a heartbeat was sent (waiting at most 1 s for Redis, and only if
	 * Redis has answered a heartbeat), then stops the executor.
	 */
	@Override
	public void stop() {
		ScheduledExecutorService running = this.heartbeat;
		this.heartbeat = null;
		if (running == null) {
			return;
		}
		running.shutdownNow();
		try {
			// a tick never waits for Redis: this ends at once, and no heartbeat is sent after the withdrawal
			running.awaitTermination(WITHDRAW_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			if (this.lastHeartbeat != null) { // a heartbeat was sent, so it may have reached Redis
				// sent after the heartbeat on the same connection, so Redis runs it after; waited for only when Redis
				// has answered a heartbeat, so that an unreachable Redis does not hold the stop
				CompletableFuture<Long> withdrawal = this.redis.removeFromSortedSet(this.key[0], this.arguments[0]);
				if (isLearned()) {
					withdrawal.get(WITHDRAW_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException ex) {
			logger.debug("Instance withdrawal failed: {}", String.valueOf(ex.getCause()));
		}
		catch (TimeoutException ex) {
			logger.debug("Instance withdrawal failed: no answer within {}", WITHDRAW_TIMEOUT);
		}
		finally {
			if (this.redis instanceof Lifecycle lifecycle) {
				lifecycle.stop();
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.heartbeat != null;
	}

	/** Closes the executor (a {@link LettuceScriptExecutor} closes its connection); later heartbeats fail. */
	@Override
	public void close() {
		this.redis.close();
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
