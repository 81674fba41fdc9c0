package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.benchmarks.Contenders.Scenario;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * Entry point of the benchmark harness (run by {@code src/benchmarks/run}, not by Maven's test phase).
 *
 * <ul>
 * <li>{@code checks --port P --out DIR [--quick]}: against a fresh Redis, the check benchmarks: closed loop at
 * concurrency 1, 16, 256 (allowed) and 16, 256 (over limit), interleaved over contenders for several rounds; open
 * loop at 10,000 checks/s; a hot abusive client (Redis calls per denied check, from INFO commandstats); a JFR
 * profile of the starter's check path. Writes TSV files and markdown fragments into DIR.</li>
 * <li>{@code script-info --port P --out DIR}: the starter's EVALSHA (SHA, keys, arguments) as MONITOR sees it, and
 * the script's text, for the {@code redis-benchmark} ceiling.</li>
 * <li>{@code upstream --port P [--host H] [--threads T]}: the end-to-end benchmark's upstream ({@link Upstream}),
 * serving until the JVM is stopped.</li>
 * <li>{@code gateway --port P --redis-port R [--info FILE]}: the minimal gateway of the route comparison
 * ({@link BenchGateway}), serving until the JVM is stopped.</li>
 * <li>{@code routes --gateway-port P --gateway-pid PID --redis-port R [--redis-pid PID] --scripts DIR --out DIR
 * [--quick]}: the route comparison inside that one gateway (issue 14, {@link RouteComparison}): wrk runs,
 * interleaved rounds.</li>
 * <li>{@code zipf-table --keys N [--s S] --out FILE}: the cumulative Zipf table the wrk script samples from
 * ({@link ZipfTable}).</li>
 * <li>{@code jfr-summary --file F --title T --out MD}: summarise a JFR recording (e.g. the gateway's).</li>
 * <li>{@code report --results DIR --markdown MD --chart PNG}: write the report and chart from DIR.</li>
 * <li>{@code model-upstream --port P [--workers 16] [--service-ms 50] [--samples FILE]}: the protection benchmark's
 * model upstream ({@link ModelUpstream}), serving until the JVM is stopped.</li>
 * <li>{@code protection-gateway --port P --redis-port R --upstream-port U --samples FILE [--info FILE]}: the
 * protection benchmark's gateway ({@link ProtectionGateway}), serving until the JVM is stopped.</li>
 * <li>{@code protection-drive --gateway-port P --upstream-port U --out DIR [--runs ...] [--quick]}: its open-loop
 * driver ({@link ProtectionDriver}).</li>
 * <li>{@code protection-report --results DIR --markdown MD --chart PNG}: its report and chart
 * ({@link ProtectionReport}).</li>
 * </ul>
 */
public final class BenchmarkMain {

	private static final Logger logger = LoggerFactory.getLogger(BenchmarkMain.class);

	static final List<String> CHECK_HEADER = List.of("scenario", "concurrency", "round", "contender", "checks_per_s",
			"p50_us", "p90_us", "p99_us", "p999_us", "max_us", "checks", "errors", "undecided", "allowed_pct", "sources");

	static final List<String> OPEN_HEADER = List.of("contender", "round", "target_per_s", "achieved_per_s", "p50_us",
			"p90_us", "p99_us", "p999_us", "max_us", "send_lag_p99_us", "cpu_us_per_check", "checks", "errors", "undecided",
			"allowed_pct", "sources");

	static final List<String> HOT_HEADER = List.of("via", "contender", "offered_per_s", "seconds", "checks", "denied",
			"allowed", "script_calls", "all_calls", "script_calls_per_denied", "all_calls_per_denied", "sources");

	private BenchmarkMain() {
	}

	/**
	 * Run one mode of the harness (see the class comment).
	 * @param args the mode, then its options ({@code --name value} or a bare {@code --flag})
	 * @throws Exception whatever the mode fails with
	 */
	public static void main(String[] args) throws Exception {
		if (args.length == 0) {
			throw new IllegalArgumentException(
					"usage: script-info|checks|upstream|gateway|routes|zipf-table|jfr-summary|report|model-upstream"
							+ "|protection-gateway|protection-drive|protection-report [--option value ...]");
		}
		Map<String, String> options = options(Arrays.copyOfRange(args, 1, args.length));
		switch (args[0]) {
			case "checks" -> checks(options);
			case "script-info" -> ScriptCapture.capture(options.getOrDefault("host", "127.0.0.1"),
					Integer.parseInt(options.get("port")), Path.of(options.get("out")));
			case "upstream" -> Upstream.serve(options);
			case "gateway" -> {
				BenchGateway.start(options);
				Thread.currentThread().join(); // serve until the JVM is stopped
			}
			case "routes" -> RouteComparison.run(options);
			case "zipf-table" -> ZipfTable.write(Path.of(options.get("out")),
					Integer.parseInt(options.get("keys")), Double.parseDouble(options.getOrDefault("s", "1.0")));
			case "jfr-summary" -> Files.writeString(Path.of(options.get("out")),
					JfrSummary.summarize(Path.of(options.get("file")), options.getOrDefault("title", "Profile"),
							options.containsKey("since-ms")
									? java.time.Instant.ofEpochMilli(Long.parseLong(options.get("since-ms"))) : null));
			case "report" -> ReportWriter.write(Path.of(options.get("results")), Path.of(options.get("markdown")),
					Path.of(options.get("chart")));
			case "model-upstream" -> ModelUpstream.serve(options);
			case "protection-gateway" -> {
				ProtectionGateway.start(options);
				Thread.currentThread().join(); // serve until the JVM is stopped
			}
			case "protection-drive" -> ProtectionDriver.run(options);
			case "protection-report" -> ProtectionReport.write(Path.of(options.get("results")),
					Path.of(options.get("markdown")), Path.of(options.get("chart")));
			default -> throw new IllegalArgumentException("unknown mode " + args[0]);
		}
		System.exit(0);
	}

	static Map<String, String> options(String[] args) {
		Map<String, String> options = new HashMap<>();
		for (int i = 0; i < args.length; i++) {
			if (!args[i].startsWith("--")) {
				throw new IllegalArgumentException("not an option: " + args[i]);
			}
			String name = args[i].substring(2);
			if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
				options.put(name, args[++i]);
			}
			else {
				options.put(name, "true");
			}
		}
		return options;
	}

	private static void checks(Map<String, String> options) throws Exception {
		String host = options.getOrDefault("host", "127.0.0.1");
		int port = Integer.parseInt(options.get("port"));
		Path out = Path.of(options.get("out"));
		Files.createDirectories(out);
		boolean quick = options.containsKey("quick");
		int keys = Integer.parseInt(options.getOrDefault("keys", "10000"));
		int rounds = Integer.parseInt(options.getOrDefault("rounds", quick ? "1" : "5"));
		long window = millis(options.getOrDefault("window-ms", quick ? "500" : "2000"));
		long warmup = millis(quick ? "500" : "3000");
		double openRate = Double.parseDouble(options.getOrDefault("open-rate", "10000"));
		long openWindow = millis(quick ? "1000" : "4000");
		int openRounds = quick ? 1 : 3;
		double hotRate = 2000;
		long hotWindow = millis(quick ? "1000" : "8000");
		long profileWindow = millis(quick ? "1000" : "10000");

		try (ConfigurableApplicationContext context = BenchContext.start(host, port);
				RedisClient statsClient = RedisClient.create(RedisURI.create(host, port));
				StatefulRedisConnection<String, String> stats = statsClient.connect()) {
			writeVersions(context, out.resolve("versions.properties"), keys);
			Map<Scenario, List<Contender>> contenders = new LinkedHashMap<>();
			for (Scenario scenario : List.of(Scenario.ALLOWED, Scenario.OVER)) {
				contenders.put(scenario,
						List.of(Contenders.starter(context, scenario, keys),
								Contenders.starterStore(context, scenario, keys),
								Contenders.gateway(context, scenario, keys),
								Contenders.bucket4j(host, port, scenario, keys)));
			}
			try {
				logger.info("Warm-up ({} ms per contender), and every over-limit key drained", warmup / 1_000_000);
				for (Contender contender : contenders.get(Scenario.ALLOWED)) {
					// one at a time first: connections, script loading (NOSCRIPT then EVAL) and class loading are
					// slow on a cold JVM, long enough for the starter's timeout and circuit breaker to step in
					ClosedLoop.run(contender, 1, keys, warmup / 3, Long.MAX_VALUE);
					check(contender, ClosedLoop.run(contender, 16, keys, warmup, Long.MAX_VALUE));
				}
				for (Contender contender : contenders.get(Scenario.OVER)) {
					ClosedLoop.run(contender, 64, keys, TimeUnit.SECONDS.toNanos(60), 2L * keys);
					check(contender, ClosedLoop.run(contender, 16, keys, warmup / 2, Long.MAX_VALUE));
				}
				// an idle pause: on 2 busy cores the JIT compiler threads lag behind; let their queue drain
				Thread.sleep(quick ? 200 : 3000);

				for (int round = 1; round <= rounds; round++) {
					for (int concurrency : new int[] { 1, 16, 256 }) {
						for (Contender contender : rotate(contenders.get(Scenario.ALLOWED), round)) {
							closedRow(out, Scenario.ALLOWED, concurrency, round, contender,
									ClosedLoop.run(contender, concurrency, keys, window, Long.MAX_VALUE));
						}
					}
					for (int concurrency : new int[] { 16, 256 }) {
						for (Contender contender : rotate(contenders.get(Scenario.OVER), round)) {
							closedRow(out, Scenario.OVER, concurrency, round, contender,
									ClosedLoop.run(contender, concurrency, keys, window, Long.MAX_VALUE));
						}
					}
				}

				for (int round = 1; round <= openRounds; round++) {
					for (Contender contender : rotate(contenders.get(Scenario.ALLOWED), round)) {
						long cpuBefore = processCpuNanos();
						OpenLoop.Result result = OpenLoop.run(contender, keys, openRate, openWindow);
						double cpuPerCheck = (processCpuNanos() - cpuBefore) / 1000.0 / Math.max(1, result.sent);
						LoopResult r = result.checks;
						logger.info("open loop {} round {}: {} checks/s offered, p99 {} us", contender.name(), round,
								(long) openRate, fmt(r.micros(99)));
						Tsv.append(out.resolve("openloop.tsv"), OPEN_HEADER,
								List.of(contender.name(), round, fmt(openRate), fmt(r.perSecond()), fmt(r.micros(50)),
										fmt(r.micros(90)), fmt(r.micros(99)), fmt(r.micros(99.9)), fmt(r.maxMicros()),
										fmt(result.sendLag.getValueAtPercentile(99) / 1000.0), fmt(cpuPerCheck),
										r.completed.sum(),
										r.errors.sum(), r.undecided(), fmt(r.allowedPercent()), r.sourcesText()));
						check(contender, r);
					}
				}

				hotKey(context, host, port, stats, out, hotRate, hotWindow);

				profile(contenders.get(Scenario.ALLOWED).get(0), keys, profileWindow, openRate, out);

				Properties notes = new Properties();
				notes.setProperty("breaker-resets", String.valueOf(Contenders.BREAKER_RESETS.get()));
				try (var writer = Files.newBufferedWriter(out.resolve("notes.properties"))) {
					notes.store(writer, "events during the check benchmarks");
				}
			}
			finally {
				contenders.values().forEach((list) -> list.forEach(Contender::close));
			}
		}
	}

	/** A client far over its limit, offered at a fixed rate; Redis calls counted by INFO commandstats. */
	private static void hotKey(ConfigurableApplicationContext context, String host, int port,
			StatefulRedisConnection<String, String> stats, Path out, double rate, long window) throws Exception {
		List<Contender> hot = List.of(Contenders.starter(context, Scenario.HOT, 1),
				Contenders.starterStore(context, Scenario.HOT, 1), Contenders.gateway(context, Scenario.HOT, 1),
				Contenders.bucket4j(host, port, Scenario.HOT, 1));
		try {
			for (Contender contender : hot) {
				// first, a burst empties the bucket: from then on the client is far over its limit
				ClosedLoop.run(contender, 1, 1, TimeUnit.SECONDS.toNanos(10), 20);
				Map<String, Long> before = CommandStats.parse(stats.sync().info("commandstats"));
				OpenLoop.Result result = OpenLoop.run(contender, 1, rate, window);
				Map<String, Long> after = CommandStats.parse(stats.sync().info("commandstats"));
				LoopResult r = result.checks;
				long denied = r.completed.sum() - r.allowed.sum() - r.errors.sum();
				long scriptCalls = CommandStats.scriptCalls(after) - CommandStats.scriptCalls(before);
				long allCalls = CommandStats.allCalls(after) - CommandStats.allCalls(before);
				logger.info("hot key {}: {} denied, {} script calls", contender.name(), denied, scriptCalls);
				Tsv.append(out.resolve("hotkey.tsv"), HOT_HEADER,
						List.of("library", contender.name(), fmt(rate), fmt(r.seconds), r.completed.sum(), denied,
								r.allowed.sum(), scriptCalls, allCalls,
								String.format(Locale.ROOT, "%.4f", (double) scriptCalls / Math.max(1, denied)),
								String.format(Locale.ROOT, "%.4f", (double) allCalls / Math.max(1, denied)),
								r.sourcesText()));
			}
		}
		finally {
			hot.forEach(Contender::close);
		}
	}

	/**
	 * JFR profile of the starter's check path at the design's fixed load (open loop, 10,000 checks/s): the sender
	 * thread ({@code main}) runs the send path, Lettuce's event loop the answer path, so their stacks stay apart.
	 */
	private static void profile(Contender starter, int keys, long window, double rate, Path out) throws Exception {
		Path file = out.resolve("profile-check.jfr");
		try (Recording recording = new Recording(Configuration.getConfiguration("profile"))) {
			recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(2));
			recording.start();
			// Enabling a recording retransforms instrumented JDK classes and deoptimizes code that used them: the
			// first seconds run slow. Load first, then summarise only the steady part after `since`.
			OpenLoop.run(starter, keys, rate, TimeUnit.SECONDS.toNanos(5));
			java.time.Instant since = java.time.Instant.now();
			long cpuBefore = processCpuNanos();
			OpenLoop.Result result = OpenLoop.run(starter, keys, rate, window);
			double cpuPerCheck = (processCpuNanos() - cpuBefore) / 1000.0 / Math.max(1, result.sent);
			recording.stop();
			recording.dump(file);
			logger.info("profile: {} checks/s, p99 {} us, {} us CPU per check while recording",
					fmt(result.checks.perSecond()), fmt(result.checks.micros(99)), fmt(cpuPerCheck));
			Files.writeString(out.resolve("profile-check.md"), JfrSummary.summarize(file, String.format(Locale.ROOT,
					"Starter check path (FailurePolicyLimiter, open loop at %,.0f checks/s for %.0f s after 5 s under the recording; benchmark JVM CPU %.1f µs per check, p99 %.0f µs, decided by `%s`)",
					rate, result.checks.seconds, cpuPerCheck, result.checks.micros(99), result.checks.sourcesText()),
					since));
		}
	}

	/** CPU time of this JVM (every thread), nanoseconds. */
	static long processCpuNanos() {
		java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory
			.getOperatingSystemMXBean();
		return (os instanceof com.sun.management.OperatingSystemMXBean sun) ? sun.getProcessCpuTime() : 0;
	}

	private static void closedRow(Path out, Scenario scenario, int concurrency, int round, Contender contender,
			LoopResult r) throws IOException {
		check(contender, r);
		logger.info("{} c={} round {} {}: {} checks/s, p50 {} us, p99 {} us, allowed {}%, {}", scenario, concurrency,
				round, contender.name(), fmt(r.perSecond()), fmt(r.micros(50)), fmt(r.micros(99)),
				fmt(r.allowedPercent()), r.sourcesText());
		Tsv.append(out.resolve("checks.tsv"), CHECK_HEADER,
				List.of(scenario.name().toLowerCase(), concurrency, round, contender.name(), fmt(r.perSecond()),
						fmt(r.micros(50)), fmt(r.micros(90)), fmt(r.micros(99)), fmt(r.micros(99.9)),
						fmt(r.maxMicros()), r.completed.sum(), r.errors.sum(), r.undecided(), fmt(r.allowedPercent()),
						r.sourcesText()));
	}

	private static void check(Contender contender, LoopResult result) {
		if (result.errors.sum() > 0) {
			logger.warn("{}: {} errors, first: {}", contender.name(), result.errors.sum(),
					String.valueOf(result.firstError));
		}
		if (result.undecided() > result.errors.sum()) {
			logger.warn("{}: {} answers not decided by Redis or the over-limit cache ({}): not counted as throughput",
					contender.name(), result.undecided() - result.errors.sum(), result.sourcesText());
		}
	}

	private static <T> List<T> rotate(List<T> list, int by) {
		List<T> rotated = new ArrayList<>(list);
		java.util.Collections.rotate(rotated, -(by - 1));
		return rotated;
	}

	private static void writeVersions(ConfigurableApplicationContext context, Path file, int keys) throws IOException {
		Properties p = new Properties();
		p.setProperty("spring-boot", SpringBootVersion.getVersion());
		p.setProperty("spring-cloud-gateway", version(org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter.class));
		p.setProperty("spring-data-redis", version(org.springframework.data.redis.core.ReactiveStringRedisTemplate.class));
		p.setProperty("lettuce", version(RedisClient.class));
		p.setProperty("reactor-core", version(reactor.core.publisher.Mono.class));
		p.setProperty("reactor-netty", version(reactor.netty.http.server.HttpServer.class));
		p.setProperty("resilience4j", version(io.github.resilience4j.circuitbreaker.CircuitBreaker.class));
		p.setProperty("bucket4j", version(io.github.bucket4j.redis.lettuce.Bucket4jLettuce.class));
		p.setProperty("hdrhistogram", version(org.HdrHistogram.Histogram.class));
		p.setProperty("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		p.setProperty("jvm-args", String.join(" ",
				java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()));
		p.setProperty("keys", String.valueOf(keys));
		p.setProperty("starter-store-bean",
				context.getBean("rateLimitStore", RateLimitStore.class).toString());
		// the chain's layers as the filter has them, outermost first
		p.setProperty("starter-chain-beans", context.getBean(DefaultLimiterChain.class).toString());
		Environment env = context.getEnvironment();
		p.setProperty("starter-redis-timeout", env.getProperty("ratelimit.redis-timeout", "(default)"));
		p.setProperty("starter-breaker-state-at-start",
				context.getBean(DefaultLimiterChain.class)
					.circuitBreakers()
					.breaker(io.github.ratelimit.gateway.chain.StoreShards.SINGLE_SHARD)
					.getState()
					.name());
		p.setProperty("starter-over-limit-cache-enabled",
				env.getProperty("ratelimit.over-limit-cache.enabled", "(default)"));
		try (var writer = Files.newBufferedWriter(file)) {
			p.store(writer, "versions seen by the benchmark JVM");
		}
	}

	static String version(Class<?> type) {
		String version = type.getPackage().getImplementationVersion();
		if (version != null) {
			return version;
		}
		try {
			String jar = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI())
				.getFileName()
				.toString();
			java.util.regex.Matcher m = java.util.regex.Pattern.compile("-(\\d[\\w.\\-]*?)\\.jar$").matcher(jar);
			return m.find() ? m.group(1) : jar;
		}
		catch (Exception ex) {
			return "?";
		}
	}

	private static long millis(String value) {
		return TimeUnit.MILLISECONDS.toNanos(Long.parseLong(value));
	}

	static String fmt(double value) {
		if (Double.isNaN(value)) {
			return "NaN";
		}
		return (Math.abs(value) >= 100) ? String.format(Locale.ROOT, "%.0f", value)
				: String.format(Locale.ROOT, "%.1f", value);
	}

}
