package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Knows how many gateway instances share the limits, so that each instance's local fallback limiter holds the
 * right share. Each instance announces itself in Redis every heartbeat interval (a sorted set
 * {@code <prefix>:instances} scored by Redis time, script {@code META-INF/ratelimit/instances.lua}) and reads the
 * number alive (heard from within 3 intervals). The last count learned is kept while Redis is down; before any
 * count is learned, or with learning off, the configured {@code ratelimit.fallback.instances} applies.
 */
public class InstanceCounter implements SmartLifecycle {

	private static final Logger logger = LoggerFactory.getLogger(InstanceCounter.class);

	private final ReactiveStringRedisTemplate redis;

	private final RedisScript<Long> script = RedisScript.of(new ClassPathResource("META-INF/ratelimit/instances.lua"),
			Long.class);

	private final String key;

	private final String instanceId = UUID.randomUUID().toString();

	private final int configured;

	private final boolean learn;

	private final Duration interval;

	private final AtomicInteger learned = new AtomicInteger();

	private volatile Disposable heartbeat;

	/**
	 * Create a counter.
	 * @param redis the template used for heartbeats
	 * @param keyPrefix prefix of the Redis keys
	 * @param configured the configured instance count (at least 1)
	 * @param learn whether to learn the count from heartbeats
	 * @param interval heartbeat interval
	 */
	public InstanceCounter(ReactiveStringRedisTemplate redis, String keyPrefix, int configured, boolean learn,
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
	 * Send one heartbeat now.
	 * @return the number of instances alive, as counted by Redis; completed exceptionally when Redis did not answer
	 */
	public CompletableFuture<Long> beat() {
		return send().toFuture();
	}

	private Mono<Long> send() {
		String alive = Long.toString(this.interval.toMillis() * 3);
		return this.redis.execute(this.script, List.of(this.key), List.of(this.instanceId, alive))
			.next()
			.doOnNext((count) -> {
				int previous = this.learned.getAndSet(count.intValue());
				if (previous != count.intValue()) {
					logger.info("Rate limiter: {} gateway instance(s) share the limits", count);
				}
			});
	}

	@Override
	public void start() {
		if (!this.learn || this.heartbeat != null) {
			return;
		}
		// boundedElastic: the first heartbeat may open the Redis connection, which blocks. A heartbeat cut short (its
		// timeout, or stop()) interrupts that connect, which then fails after the heartbeat's subscriber has gone: its
		// failure is handled before the cut (inside subscribeOn), else Reactor would log it as a dropped error with
		// its stack trace
		this.heartbeat = Flux.interval(Duration.ZERO, this.interval, Schedulers.boundedElastic())
			.onBackpressureDrop()
			.concatMap((tick) -> send().onErrorResume(InstanceCounter::failed)
				.subscribeOn(Schedulers.boundedElastic())
				.timeout(this.interval)
				.onErrorResume(InstanceCounter::failed), 1)
			.subscribe();
	}

	private static Mono<Long> failed(Throwable ex) {
		logger.debug("Instance heartbeat failed: {}", ex.toString());
		return Mono.empty();
	}

	@Override
	public void stop() {
		Disposable running = this.heartbeat;
		this.heartbeat = null;
		if (running != null) {
			running.dispose();
		}
		if (running != null && isLearned()) { // never reached Redis: nothing to withdraw
			this.redis.opsForZSet().remove(this.key, this.instanceId)
				.timeout(Duration.ofSeconds(1))
				.onErrorResume((ex) -> Mono.empty())
				.block();
		}
	}

	@Override
	public boolean isRunning() {
		return this.heartbeat != null;
	}

}
