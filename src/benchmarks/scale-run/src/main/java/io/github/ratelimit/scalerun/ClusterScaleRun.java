package io.github.ratelimit.scalerun;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.plan.ApiKey;
import io.github.ratelimit.gateway.plan.CachingPlanResolver;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.SpringDataScriptExecutor;
import io.github.ratelimit.test.redis.RedisCluster;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * The scale run of issue 5 (a benchmark, not a test): N distinct API keys (default 200,000) through the starter's
 * Redis store against a Redis Cluster, configured as the starter configures Lettuce (cluster topology refresh,
 * commands rejected while disconnected).
 *
 * <ol>
 * <li>Plan store: N keys provisioned ({@code SET rl:plan:<sha256> free}), then resolved through
 * {@link CachingPlanResolver} cold (one Redis GET each) and warm (cache hits): look-ups/s, latency, Redis bytes per
 * plan key, JVM heap per cached key.</li>
 * <li>Checks at saturation: one token bucket check ({@link RedisRateLimitStore}, the Lua script) per key,
 * with a fixed number in flight: checks/s and latency per check; then Redis memory per bucket key, per master.</li>
 * <li>Checks at the design's per-instance load (2,500/s, open loop) over random keys: latency per check and Redis
 * CPU per master.</li>
 * <li>Traffic stops: the number of bucket keys (keys with a TTL) per master until it is zero.</li>
 * </ol>
 * Prints a Markdown report (and writes it with {@code --report FILE}). Without {@code --nodes} it starts its own
 * three-master cluster from {@code redis-server} on the PATH (see {@link RedisCluster}) and stops it at the end.
 *
 * <pre>
 * ./mvnw -B -q install -DskipTests
 * ./mvnw -B -q -pl :ratelimit-scale-run exec:java -Dexec.args="--keys 200000 --report target/scale-report.md"
 * </pre>
 */
public final class ClusterScaleRun {

	private static final Logger logger = LoggerFactory.getLogger(ClusterScaleRun.class);

	private final Options options;

	private final StringBuilder report = new StringBuilder();

	private LettuceConnectionFactory factory;

	private ClusterScaleRun(Options options) {
		this.options = options;
	}

	/**
	 * Run it.
	 * @param args see {@link Options#parse(String[])}
	 * @throws IOException if the report cannot be written
	 */
	public static void main(String[] args) throws IOException {
		Options options = Options.parse(args);
		String report = run(options);
		System.out.println(report);
		if (options.report() != null) {
			Files.createDirectories(options.report().toAbsolutePath().getParent());
			Files.writeString(options.report(), report);
			logger.info("Report written to {}", options.report().toAbsolutePath());
		}
	}

	/**
	 * Run with the given options.
	 * @param options what to run
	 * @return the Markdown report
	 */
	public static String run(Options options) {
		return new ClusterScaleRun(options).execute();
	}

	private String execute() {
		RedisCluster ownCluster = null;
		String nodes = this.options.nodes();
		if (nodes == null) {
			logger.info("Starting a 3-master Redis Cluster from redis-server on the PATH");
			ownCluster = RedisCluster.start();
			nodes = ownCluster.nodeAddresses();
		}
		this.factory = connectionFactory(nodes);
		try {
			return measure(this.factory, nodes, ownCluster != null);
		}
		finally {
			this.factory.destroy();
			if (ownCluster != null) {
				ownCluster.close();
			}
		}
	}

	private String measure(LettuceConnectionFactory factory, String nodes, boolean ownCluster) {
		ReactiveStringRedisTemplate redis = new ReactiveStringRedisTemplate(factory);
		Stats stats = new Stats(factory);
		int n = this.options.keys();
		line("# Scale run: %,d clients on a Redis Cluster", n);
		line("");
		line("Started %s. Cluster: %s (%d masters, %s). JVM: %s %s, %d CPUs, load average %.2f at the start. "
				+ "Options: %s.", Instant.now(), nodes, stats.masters().size(),
				ownCluster ? "started by the run" : "given with --nodes", System.getProperty("java.vm.name"),
				System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
				ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), this.options);
		line("");
		// every key the run writes starts with "rl:": make sure none is left from an earlier run
		stats.requireNoKeys();

		String[] apiKeys = new String[n];
		for (int i = 0; i < n; i++) {
			apiKeys[i] = "scale-run-key-" + i;
		}
		logger.info("Warming up");
		warmUp(redis);
		logger.info("Plan store: provisioning and resolving {} keys", n);
		planStore(redis, stats, apiKeys);
		logger.info("Token bucket checks");
		checks(redis, stats, apiKeys);
		return this.report.toString();
	}

	// ---------------------------------------------------------------------------------------------------------------

	private void planStore(ReactiveStringRedisTemplate redis, Stats stats, String[] apiKeys) {
		int n = apiKeys.length;
		Map<String, Long> before = stats.usedMemory();
		long start = System.nanoTime();
		Flux.range(0, n)
			.flatMap((i) -> redis.opsForValue()
				.set(RedisPlanStore.planKey(RedisPlanStore.DEFAULT_KEY_PREFIX, apiKeys[i]), "free"),
					this.options.concurrency())
			.blockLast();
		double provisionSeconds = (System.nanoTime() - start) / 1e9;
		Map<String, Long> after = stats.usedMemory();
		Map<String, Long> keys = stats.dbSize();

		CachingPlanResolver resolver = new CachingPlanResolver(
				new RedisPlanStore(redis, RedisPlanStore.DEFAULT_KEY_PREFIX), Set.of("free"),
				new CachingPlanResolver.Settings(n + 1_000L, Duration.ofMinutes(5), Duration.ofSeconds(30),
						Duration.ofHours(1), Duration.ofSeconds(2), 0));
		long heapBefore = usedHeapAfterGc();
		Latencies cold = run(n, this.options.concurrency(), (i) -> Mono.fromCompletionStage(resolver.resolvePlan(ApiKey.of(apiKeys[i])))
			.flatMap(Mono::justOrEmpty));
		long heapAfter = usedHeapAfterGc();
		Latencies warm = run(n, this.options.concurrency(), (i) -> Mono.fromCompletionStage(resolver.resolvePlan(ApiKey.of(apiKeys[i])))
			.flatMap(Mono::justOrEmpty));
		if (cold.empty() > 0 || warm.empty() > 0) {
			throw new IllegalStateException("plan look-ups without a plan: " + cold.empty() + " cold, " + warm.empty()
					+ " warm");
		}

		line("## 1. Plan store: %,d API keys", n);
		line("");
		line("Provisioned with `SET rl:plan:<sha256> free` (%d in flight): %.1f s, %,.0f keys/s.",
				this.options.concurrency(), provisionSeconds, n / provisionSeconds);
		line("");
		line("| master | plan keys | used_memory delta | bytes per key |");
		line("|---|---:|---:|---:|");
		memoryRows(before, after, keys);
		line("");
		line("Resolved through `CachingPlanResolver` (%d in flight):", this.options.concurrency());
		line("");
		line("| pass | look-ups/s | p50 | p99 | p99.9 | max | JVM CPU per look-up | GCs, time |");
		line("|---|---:|---:|---:|---:|---:|---:|---:|");
		line("| cold (one Redis GET each) | %s |", cold.row());
		line("| warm (cache hits) | %s |", warm.row());
		line("");
		line("JVM heap held by the cache: %,d bytes for %,d keys, about %,d bytes per cached key (used heap after a "
				+ "full GC, before and after the cold pass).", heapAfter - heapBefore, resolver.estimatedSize(),
				(heapAfter - heapBefore) / Math.max(1, resolver.estimatedSize()));
		line("");
	}

	private void checks(ReactiveStringRedisTemplate redis, Stats stats, String[] apiKeys) {
		int n = apiKeys.length;
		Duration idle = this.options.idleTtl();
		// one check takes 1 token of 100 and 1 token comes back per idle-ttl: each bucket key expires idle-ttl
		// after its last check (when it is full again)
		PlanLimits limits = new PlanLimits("free", "scale",
				List.of(new LimitDefinition("free-scale", 100, 1, idle)));
		RedisRateLimitStore limiter = new RedisRateLimitStore(
				new SpringDataScriptExecutor(redis.getConnectionFactory()), new BucketKeys("rl"));
		ClientKey[] clients = new ClientKey[n];
		for (int i = 0; i < n; i++) {
			clients[i] = new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(apiKeys[i]), "free");
		}
		Map<String, Long> before = stats.usedMemory();
		Latencies create = run(n, this.options.concurrency(), (i) -> Mono
			.fromFuture(limiter.tryConsume(clients[i], limits, 1)));
		Map<String, Long> after = stats.usedMemory();
		Map<String, Long> buckets = stats.expiringKeys();
		Map<String, Double> updateCpuBefore = stats.cpuSeconds();
		Map<String, Long> updateCallsBefore = stats.scriptCalls();
		Latencies update = run(n, this.options.concurrency(), (i) -> Mono
			.fromFuture(limiter.tryConsume(clients[i], limits, 1)));
		Map<String, Double> updateCpuAfter = stats.cpuSeconds();
		Map<String, Long> updateCallsAfter = stats.scriptCalls();
		requireAllAllowed(create, update);

		line("## 2. Token bucket checks at saturation: %,d clients, %d in flight", n, this.options.concurrency());
		line("");
		line("One `RedisRateLimitStore.tryConsume` per client (the Lua script, EVALSHA, one slot per call); "
				+ "limit: capacity 100, 1 token back per %s, so a bucket key expires when its bucket is full again, "
				+ "%s per token taken.",
				human(idle), human(idle));
		line("");
		line("| pass | checks/s | p50 | p99 | p99.9 | max | JVM CPU per check | GCs, time |");
		line("|---|---:|---:|---:|---:|---:|---:|---:|");
		line("| 2a: first check per client (creates the key) | %s |", create.row());
		line("| 2b: second check per client (updates it) | %s |", update.row());
		line("");
		line("Redis during pass 2b:");
		line("");
		cpuRows(updateCallsBefore, updateCallsAfter, updateCpuBefore, updateCpuAfter, update.elapsedNanos() / 1e9);
		line("");
		line("Redis memory for the %,d bucket keys (one hash `{tk, ts}` with a TTL each, key "
				+ "`rl:{scale|k:<22-char hash>}:0`):", n);
		line("");
		line("| master | bucket keys | used_memory delta | bytes per key |");
		line("|---|---:|---:|---:|");
		memoryRows(before, after, buckets);
		line("");

		long idleNanos = Math.min(5_000_000_000L, this.options.pacedDuration().toNanos());
		Map<String, Double> idleBefore = stats.cpuSeconds();
		LockSupport.parkNanos(idleNanos);
		Map<String, Double> idleAfter = stats.cpuSeconds();
		logger.info("Paced checks: {}/s for {}", this.options.pacedRate(), this.options.pacedDuration());
		Map<String, Double> cpuBefore = stats.cpuSeconds();
		Map<String, Long> callsBefore = stats.scriptCalls();
		long pacedStart = System.nanoTime();
		Latencies paced = paced(this.options.pacedRate(), this.options.pacedDuration(),
				(i) -> Mono.fromFuture(limiter.tryConsume(clients[ThreadLocalRandom.current().nextInt(n)], limits, 1)));
		double pacedSeconds = (System.nanoTime() - pacedStart) / 1e9;
		Map<String, Double> cpuAfter = stats.cpuSeconds();
		Map<String, Long> callsAfter = stats.scriptCalls();
		requireAllAllowed(paced);
		line("## 3. Checks at the design's per-instance load: %,d checks/s for %s, random clients",
				this.options.pacedRate(), human(this.options.pacedDuration()));
		line("");
		line("Open loop (sent on schedule, not after the previous answer).");
		line("");
		line("| checks | achieved checks/s | p50 | p99 | p99.9 | max | JVM CPU per check | GCs, time |");
		line("|---:|---:|---:|---:|---:|---:|---:|---:|");
		line("| %,d | %s |", paced.count(), paced.row());
		line("");
		cpuRows(callsBefore, callsAfter, cpuBefore, cpuAfter, pacedSeconds);
		line("");
		StringBuilder idleCpu = new StringBuilder();
		for (String master : idleAfter.keySet()) {
			idleCpu.append((idleCpu.length() > 0) ? ", " : "").append(String.format(Locale.ROOT, "%s %.1f %%", master,
					100 * (idleAfter.get(master) - idleBefore.getOrDefault(master, 0.0)) / (idleNanos / 1e9)));
		}
		line("For comparison, the same masters without traffic (%s just before this pass, cluster bus and cron "
				+ "only): %s of one core.", human(Duration.ofNanos(idleNanos)), idleCpu);
		line("");

		logger.info("Traffic stopped; watching the key count");
		expiry(stats, idle);
		line("Load average at the end: %.2f.", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
	}

	private void expiry(Stats stats, Duration idle) {
		if (!this.options.awaitExpiry()) {
			line("## 4. Key count after traffic stops: not awaited (--await-expiry false)");
			return;
		}
		line("## 4. Key count after traffic stops");
		line("");
		line("Bucket keys (keys with a TTL, `INFO keyspace` `expires`) per master, polled after the last check. A key "
				+ "expires when its bucket is full again: %s per token its client took and has not got back, so a "
				+ "client checked twice (passes 2a and 2b) is gone 2 × %s after its last check, one also picked in "
				+ "pass 3 later.", human(idle), human(idle));
		line("");
		List<RedisClusterNode> masters = stats.masters();
		StringBuilder header = new StringBuilder("| seconds after the last check |");
		StringBuilder rule = new StringBuilder("|---:|");
		for (RedisClusterNode master : masters) {
			header.append(' ').append(name(master)).append(" |");
			rule.append("---:|");
		}
		line("%s total |", header);
		line("%s---:|", rule);
		long stoppedAt = System.nanoTime();
		// a bucket is full again (and its key expires) idle-ttl per token taken after its last check
		long deadline = stoppedAt + idle.multipliedBy(6).plusSeconds(60).toNanos();
		long step = Math.max(1, Math.min(10, idle.toSeconds() / 6)) * 1_000_000_000L;
		if (idle.toMillis() < 6_000) {
			step = Math.max(100, idle.toMillis() / 4) * 1_000_000L;
		}
		long nextAt = stoppedAt;
		while (true) {
			Map<String, Long> keys = stats.expiringKeys();
			long total = keys.values().stream().mapToLong(Long::longValue).sum();
			StringBuilder row = new StringBuilder("| ").append(String.format(Locale.ROOT, "%.0f",
					(System.nanoTime() - stoppedAt) / 1e9)).append(" |");
			for (RedisClusterNode master : masters) {
				row.append(String.format(Locale.ROOT, " %,d |", keys.getOrDefault(name(master), 0L)));
			}
			line("%s %,d |", row, total);
			if (total == 0) {
				break;
			}
			if (System.nanoTime() - deadline > 0) {
				line("");
				line("Gave up waiting: %,d keys left %s after the last check.", total,
						human(idle.multipliedBy(6).plusSeconds(60)));
				break;
			}
			nextAt += step;
			LockSupport.parkNanos(Math.max(0, nextAt - System.nanoTime()));
		}
		line("");
	}

	// ---------------------------------------------------------------------------------------------------------------

	/** Runs {@code count} operations with at most {@code inFlight} outstanding, timing each. */
	private static Latencies run(int count, int inFlight, IntFunction<Mono<?>> operation) {
		long[] nanos = new long[count];
		AtomicInteger empty = new AtomicInteger();
		AtomicInteger denied = new AtomicInteger();
		long cpu = processCpuNanos();
		long[] gc = gcCountAndMillis();
		long start = System.nanoTime();
		Flux.range(0, count).flatMap((i) -> Mono.defer(() -> {
			long t0 = System.nanoTime();
			return operation.apply(i).doOnNext((result) -> {
				nanos[i] = System.nanoTime() - t0;
				if (result instanceof RateLimitDecision decision && !decision.allowed()) {
					denied.incrementAndGet();
				}
			}).switchIfEmpty(Mono.fromRunnable(() -> {
				nanos[i] = System.nanoTime() - t0;
				empty.incrementAndGet();
			}));
		}), inFlight).blockLast();
		long elapsed = System.nanoTime() - start;
		return new Latencies(nanos, count, elapsed, empty.get(), denied.get(), processCpuNanos() - cpu,
				gcSince(gc));
	}

	/** Sends {@code rate} operations per second for {@code duration}, open loop, timing each. */
	private static Latencies paced(int rate, Duration duration, IntFunction<Mono<?>> operation) {
		int count = (int) (rate * duration.toNanos() / 1_000_000_000L);
		long[] nanos = new long[count];
		AtomicInteger done = new AtomicInteger();
		AtomicInteger denied = new AtomicInteger();
		AtomicLong errors = new AtomicLong();
		long cpu = processCpuNanos();
		long[] gc = gcCountAndMillis();
		long start = System.nanoTime();
		for (int i = 0; i < count; i++) {
			long due = start + (long) i * 1_000_000_000L / rate;
			long wait = due - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			int index = i;
			long t0 = System.nanoTime();
			operation.apply(index).subscribe((result) -> {
				nanos[index] = System.nanoTime() - t0;
				if (result instanceof RateLimitDecision decision && !decision.allowed()) {
					denied.incrementAndGet();
				}
			}, (ex) -> {
				errors.incrementAndGet();
				done.incrementAndGet();
			}, done::incrementAndGet);
		}
		long sendEnd = System.nanoTime();
		while (done.get() < count) {
			LockSupport.parkNanos(1_000_000);
			if (System.nanoTime() - sendEnd > 30_000_000_000L) {
				throw new IllegalStateException((count - done.get()) + " checks never answered");
			}
		}
		if (errors.get() > 0) {
			throw new IllegalStateException(errors.get() + " checks failed");
		}
		return new Latencies(nanos, count, sendEnd - start, 0, denied.get(), processCpuNanos() - cpu, gcSince(gc));
	}

	private static void requireAllAllowed(Latencies... passes) {
		for (Latencies pass : passes) {
			if (pass.denied() > 0) {
				throw new IllegalStateException(pass.denied() + " checks denied: the run's limit should admit all");
			}
		}
	}

	private void cpuRows(Map<String, Long> callsBefore, Map<String, Long> callsAfter, Map<String, Double> cpuBefore,
			Map<String, Double> cpuAfter, double seconds) {
		line("| master | script calls | calls/s | Redis CPU (user+sys) | Redis CPU per call |");
		line("|---|---:|---:|---:|---:|");
		for (String master : callsAfter.keySet()) {
			long calls = callsAfter.getOrDefault(master, 0L) - callsBefore.getOrDefault(master, 0L);
			double cpu = cpuAfter.getOrDefault(master, 0.0) - cpuBefore.getOrDefault(master, 0.0);
			line("| %s | %,d | %,.0f | %.0f %% of one core | %.0f µs |", master, calls, calls / seconds,
					100 * cpu / seconds, 1e6 * cpu / Math.max(1, calls));
		}
	}

	private void memoryRows(Map<String, Long> before, Map<String, Long> after,
			Map<String, Long> keys) {
		long totalKeys = 0;
		long totalBytes = 0;
		for (String master : before.keySet()) {
			long bytes = after.getOrDefault(master, 0L) - before.get(master);
			long count = keys.getOrDefault(master, 0L);
			totalKeys += count;
			totalBytes += bytes;
			line("| %s | %,d | %,d | %s |", master, count, bytes, (count > 0) ? String.format(Locale.ROOT,
					"%.0f", (double) bytes / count) : "-");
		}
		line("| **all** | **%,d** | **%,d** | **%.0f** |", totalKeys, totalBytes,
				(double) totalBytes / Math.max(1, totalKeys));
	}

	/** Short-lived buckets and a few thousand look-ups so that the JIT has compiled the path before measuring. */
	private void warmUp(ReactiveStringRedisTemplate redis) {
		PlanLimits limits = new PlanLimits("free", "warmup",
				List.of(new LimitDefinition("free-warmup", 10, 10, Duration.ofMillis(100))));
		RedisRateLimitStore limiter = new RedisRateLimitStore(
				new SpringDataScriptExecutor(redis.getConnectionFactory()), new BucketKeys("rl"));
		int count = Math.min(50_000, Math.max(1_000, this.options.keys() / 4));
		run(count, this.options.concurrency(), (i) -> Mono.fromFuture(limiter
			.tryConsume(new ClientKey(ClientKey.Kind.API_KEY, "warmup-" + (i % 1_000), "free"), limits, 1)));
		// wait until the warm-up buckets (100 ms TTL) are gone, so they do not count in the memory figures
		Stats stats = new Stats(this.factory);
		long deadline = System.nanoTime() + 10_000_000_000L;
		while (stats.dbSize().values().stream().mapToLong(Long::longValue).sum() > 0) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("warm-up keys did not expire");
			}
			LockSupport.parkNanos(50_000_000);
		}
	}

	/** Collections and their total time (ms) so far, every collector. */
	private static long[] gcCountAndMillis() {
		long count = 0;
		long millis = 0;
		for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
			count += Math.max(0, gc.getCollectionCount());
			millis += Math.max(0, gc.getCollectionTime());
		}
		return new long[] { count, millis };
	}

	private static long[] gcSince(long[] before) {
		long[] now = gcCountAndMillis();
		return new long[] { now[0] - before[0], now[1] - before[1] };
	}

	/** CPU time of this JVM (every thread: the caller, Reactor, Lettuce's event loops, GC, JIT). */
	private static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

	private static long usedHeapAfterGc() {
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
	}

	private static LettuceConnectionFactory connectionFactory(String nodes) {
		// as the starter configures Lettuce: topology refresh, commands rejected while disconnected
		ClusterClientOptions.Builder options = ClusterClientOptions.builder()
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
		new ClusterTopologyRefreshCustomizer(ClusterTopologyRefreshCustomizer.DEFAULT_PERIOD, true, true)
			.customize(options);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(Arrays.asList(nodes.split(","))),
				LettuceClientConfiguration.builder().clientOptions(options.build()).commandTimeout(Duration.ofSeconds(5))
					.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private void line(String format, Object... args) {
		this.report.append(String.format(Locale.ROOT, format, args)).append('\n');
	}

	private static String name(RedisClusterNode node) {
		return node.getHost() + ":" + node.getPort();
	}

	static String human(Duration duration) {
		long seconds = duration.toSeconds();
		if (duration.toMillis() % 1000 != 0) {
			return duration.toMillis() + " ms";
		}
		return (seconds % 60 == 0) ? (seconds / 60) + " min" : seconds + " s";
	}

	// ---------------------------------------------------------------------------------------------------------------

	/**
	 * What to run.
	 *
	 * @param keys distinct clients (API keys)
	 * @param concurrency operations in flight in the saturation passes
	 * @param pacedRate checks per second of the paced pass
	 * @param pacedDuration how long the paced pass runs
	 * @param idleTtl how long after its last check a bucket key expires
	 * @param awaitExpiry whether to watch the key count fall to zero
	 * @param nodes {@code host:port,...} of an existing cluster, or {@code null} to start one
	 * @param report file to write the report to, or {@code null}
	 */
	public record Options(int keys, int concurrency, int pacedRate, Duration pacedDuration, Duration idleTtl,
			boolean awaitExpiry, String nodes, Path report) {

		/**
		 * Parse {@code --keys 200000 --concurrency 64 --paced-rate 2500 --paced-duration 30s --idle-ttl 60s
		 * --await-expiry true --nodes host:port,... --report FILE} (every option optional; these are the
		 * defaults, without nodes and report; durations as in Spring Boot properties: {@code 500ms}, {@code 1m}).
		 * @param args the arguments
		 * @return the options
		 */
		public static Options parse(String[] args) {
			Map<String, String> values = new LinkedHashMap<>();
			for (int i = 0; i + 1 < args.length; i += 2) {
				if (!args[i].startsWith("--")) {
					throw new IllegalArgumentException("expected --option value pairs, got " + List.of(args));
				}
				values.put(args[i].substring(2), args[i + 1]);
			}
			if (args.length % 2 != 0) {
				throw new IllegalArgumentException("expected --option value pairs, got " + List.of(args));
			}
			Options options = new Options(Integer.parseInt(values.getOrDefault("keys", "200000")),
					Integer.parseInt(values.getOrDefault("concurrency", "64")),
					Integer.parseInt(values.getOrDefault("paced-rate", "2500")),
					DurationStyle.detectAndParse(values.getOrDefault("paced-duration", "30s")),
					DurationStyle.detectAndParse(values.getOrDefault("idle-ttl", "60s")),
					Boolean.parseBoolean(values.getOrDefault("await-expiry", "true")), values.get("nodes"),
					values.containsKey("report") ? Path.of(values.get("report")) : null);
			List<String> unknown = new ArrayList<>(values.keySet());
			unknown.removeAll(List.of("keys", "concurrency", "paced-rate", "paced-duration", "idle-ttl",
					"await-expiry", "nodes", "report"));
			if (!unknown.isEmpty()) {
				throw new IllegalArgumentException("unknown options " + unknown);
			}
			return options;
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "--keys %d --concurrency %d --paced-rate %d --paced-duration %s "
					+ "--idle-ttl %s", this.keys, this.concurrency, this.pacedRate,
					print(this.pacedDuration), print(this.idleTtl));
		}

		private static String print(Duration duration) {
			return (duration.toMillis() % 1000 == 0) ? duration.toSeconds() + "s" : duration.toMillis() + "ms";
		}

	}

	/** Per-operation latencies of one pass. */
	private record Latencies(long[] nanos, int count, long elapsedNanos, int empty, int denied, long cpuNanos,
			long[] gc) {

		String row() {
			long[] sorted = Arrays.copyOf(this.nanos, this.count);
			Arrays.sort(sorted);
			return String.format(Locale.ROOT, "%,.0f | %s | %s | %s | %s | %.0f µs | %d, %d ms",
					this.count / (this.elapsedNanos / 1e9), micros(percentile(sorted, 0.50)),
					micros(percentile(sorted, 0.99)), micros(percentile(sorted, 0.999)),
					micros(sorted[sorted.length - 1]), this.cpuNanos / 1e3 / this.count, this.gc[0], this.gc[1]);
		}

		private static long percentile(long[] sorted, double q) {
			int index = (int) Math.ceil(q * sorted.length) - 1;
			return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
		}

		private static String micros(long nanos) {
			return (nanos >= 10_000_000) ? String.format(Locale.ROOT, "%.0f ms", nanos / 1e6)
					: (nanos >= 1_000_000) ? String.format(Locale.ROOT, "%.2f ms", nanos / 1e6)
							: String.format(Locale.ROOT, "%.0f µs", nanos / 1e3);
		}

	}

	/** Per-master figures from INFO, read over the cluster connection. */
	private static final class Stats {

		private final LettuceConnectionFactory factory;

		Stats(LettuceConnectionFactory factory) {
			this.factory = factory;
		}

		List<RedisClusterNode> masters() {
			try (RedisClusterConnection connection = this.factory.getClusterConnection()) {
				List<RedisClusterNode> masters = new ArrayList<>();
				for (RedisClusterNode node : connection.clusterGetNodes()) {
					if (node.isMaster() && node.isConnected()) {
						masters.add(node);
					}
				}
				masters.sort((a, b) -> Integer.compare(a.getPort(), b.getPort()));
				return masters;
			}
		}

		Map<String, Long> usedMemory() {
			return perMaster("memory", (info) -> Long.parseLong(info.getProperty("used_memory")));
		}

		Map<String, Double> cpuSeconds() {
			return perMaster("cpu", (info) -> Double.parseDouble(info.getProperty("used_cpu_user"))
					+ Double.parseDouble(info.getProperty("used_cpu_sys")));
		}

		/** EVALSHA + EVAL calls. */
		Map<String, Long> scriptCalls() {
			return perMaster("commandstats", (info) -> calls(info, "cmdstat_evalsha") + calls(info, "cmdstat_eval"));
		}

		Map<String, Long> dbSize() {
			return perMaster("keyspace", (info) -> keyspace(info, "keys"));
		}

		/** Keys with a TTL: the bucket keys (plan keys have none). */
		Map<String, Long> expiringKeys() {
			return perMaster("keyspace", (info) -> keyspace(info, "expires"));
		}

		void requireNoKeys() {
			long keys = dbSize().values().stream().mapToLong(Long::longValue).sum();
			if (keys > 0) {
				throw new IllegalStateException("The cluster holds " + keys + " keys: run against an empty cluster "
						+ "(the memory figures are deltas, and the run writes rl:plan:* keys without a TTL)");
			}
		}

		private static long calls(Properties info, String name) {
			String value = info.getProperty(name);
			if (value == null) {
				return 0;
			}
			for (String field : value.split(",")) {
				if (field.startsWith("calls=")) {
					return Long.parseLong(field.substring(6));
				}
			}
			return 0;
		}

		private static long keyspace(Properties info, String field) {
			String db0 = info.getProperty("db0");
			if (db0 == null) {
				return 0;
			}
			for (String part : db0.split(",")) {
				if (part.startsWith(field + "=")) {
					return Long.parseLong(part.substring(field.length() + 1));
				}
			}
			return 0;
		}

		private <T> Map<String, T> perMaster(String section,
				java.util.function.Function<Properties, T> extract) {
			Map<String, T> values = new LinkedHashMap<>();
			try (RedisClusterConnection connection = this.factory.getClusterConnection()) {
				for (RedisClusterNode master : masters()) {
					Properties info = connection.serverCommands().info(master, section);
					values.put(name(master), extract.apply(info));
				}
			}
			return values;
		}

	}

}
