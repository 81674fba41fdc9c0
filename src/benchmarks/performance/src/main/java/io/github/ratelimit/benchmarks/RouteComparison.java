package io.github.ratelimit.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The route comparison of issue 14, inside ONE gateway process ({@link BenchGateway}, started by the run script):
 * {@code wrk -t1} against its routes, one Redis, interleaved rounds (the route order rotated each round), medians
 * in the report. Per run: requests per second, latency percentiles, per request the CPU time of the gateway, of
 * Redis and of the whole machine and their context switches ({@link ProcessCounters}, {@link MachineCounters}: all
 * read from {@code /proc} over the same window), Redis calls per allowed request and Redis' time executing the
 * scripts per request and per call (from {@code INFO commandstats}). Before the rounds: a check that every route
 * answers as configured, a census of the buckets the limiters touch (MONITOR: every API key must be a bucket of its
 * own), a warm-up until the JIT compiler is (nearly) idle. After them: the Redis memory per idle token-bucket key,
 * then a JFR profile of the gateway on the route with {@code RateLimit} and on the route without a filter
 * ({@link GatewayProfile}).
 *
 * <p>Writes into the output directory: {@code routes.tsv} (one row per wrk run), {@code routes-census.tsv},
 * {@code routes-memory.tsv}, {@code routes-profile*.tsv} and the recordings {@code routes-profile-<route>.jfr},
 * {@code routes.properties} (settings) and {@code routes-wrk.log} (wrk's raw output).
 */
final class RouteComparison {

	private static final Logger logger = LoggerFactory.getLogger(RouteComparison.class);

	static final List<String> HEADER = List.of("measurement", "round", "route", "distribution", "keys",
			"connections", "seconds", "req_per_s", "p50_us", "p90_us", "p99_us", "requests", "non2xx",
			"socket_errors", "cpu_us_per_req", "script_calls", "all_calls", "script_calls_per_allowed",
			"all_calls_per_allowed", "redis_cpu_us_per_req", "machine_cpu_us_per_req", "gateway_cs_per_req",
			"redis_cs_per_req", "machine_cs_per_req", "redis_script_us_per_req", "redis_script_us_per_call");

	static final List<String> CENSUS_HEADER = List.of("route", "keys_sent", "requests", "script_calls",
			"distinct_buckets", "api_key_buckets", "ip_buckets", "example_key");

	static final List<String> MEMORY_HEADER = List.of("route", "keys_sent", "bucket_keys", "other_keys",
			"used_memory_before", "used_memory_after", "bytes_per_key", "memory_usage_one_key", "ttl_ms_one_key",
			"example_key");

	/** Uniform rotation over this many API keys. */
	static final int UNIFORM_KEYS = 10_000;

	/** Zipf law over this many API keys. */
	static final int ZIPF_KEYS = 200_000;

	/** Exponent of the Zipf law. */
	static final double ZIPF_S = 1.0;

	/** Length of each profile window, seconds (the {@code profile-seconds} option; {@code --quick}: 3). */
	static final int PROFILE_SECONDS = 20;

	/** One settling pass: load on each profiled route under the first recording, seconds. */
	static final int PROFILE_SETTLE_SECONDS = 3;

	/** Settling passes at most ({@code --quick}: 6). */
	static final int PROFILE_SETTLE_PASSES = 15;

	/** Period of JFR's execution samples in the profile windows, milliseconds. */
	static final int PROFILE_PERIOD_MS = 5;

	/** Idle keys whose Redis memory is measured. */
	static final int IDLE_KEYS = 200_000;

	/**
	 * One measurement: a key distribution and a connection count, over some of the routes.
	 * @param name its name in {@code routes.tsv}
	 * @param distribution {@code uniform} or {@code zipf}
	 * @param keys number of API keys
	 * @param connections wrk connections
	 * @param routes route ids measured, in base order
	 */
	record Measurement(String name, String distribution, int keys, int connections, List<String> routes) {
	}

	private final Map<String, String> options;

	private final int gatewayPort;

	private final long gatewayPid;

	private final long redisPid;

	private final Path out;

	private final Path script;

	private final Path zipfTable;

	private final List<String> routes;

	private final boolean quick;

	private final long clockTicks;

	private final RedisCommands<String, String> redis;

	private final AtomicReference<Process> wrk = new AtomicReference<>();

	private RouteComparison(Map<String, String> options, RedisCommands<String, String> redis) {
		this.options = options;
		this.gatewayPort = Integer.parseInt(options.get("gateway-port"));
		this.gatewayPid = Long.parseLong(options.get("gateway-pid"));
		this.out = Path.of(options.get("out"));
		this.script = Path.of(options.get("scripts")).resolve("api-keys.lua");
		this.zipfTable = this.out.resolve("zipf-cdf.txt");
		this.routes = List.of(options.getOrDefault("routes", String.join(",", BenchGateway.routes(false))).split(","));
		this.quick = options.containsKey("quick");
		this.clockTicks = Long.parseLong(options.getOrDefault("clk-tck", "100"));
		this.redis = redis;
		this.redisPid = Long.parseLong(options.containsKey("redis-pid") ? options.get("redis-pid")
				: info(redis.info("server"), "process_id"));
	}

	/**
	 * Run the comparison (see the class comment).
	 * @param options {@code gateway-port}, {@code gateway-pid}, {@code redis-port}, {@code scripts} (the folder
	 * holding {@code api-keys.lua}), {@code out}, {@code routes} (comma-separated), optional {@code quick},
	 * {@code rounds}, {@code seconds}, {@code clk-tck}, {@code redis-pid} (default: {@code process_id} of
	 * {@code INFO server}; either way Redis must run on this machine), {@code profile-seconds} (each profile window,
	 * default {@value #PROFILE_SECONDS}, {@code quick} 3; 0: no profile)
	 * @throws Exception on failure
	 */
	static void run(Map<String, String> options) throws Exception {
		Path out = Path.of(options.get("out"));
		Files.createDirectories(out);
		try (RedisClient client = RedisClient
			.create(RedisURI.create(options.getOrDefault("redis-host", "127.0.0.1"),
					Integer.parseInt(options.get("redis-port"))));
				StatefulRedisConnection<String, String> connection = client.connect()) {
			RouteComparison comparison = new RouteComparison(options, connection.sync());
			Thread stopWrk = new Thread(comparison::stopWrk, "stop-wrk");
			Runtime.getRuntime().addShutdownHook(stopWrk);
			comparison.run();
		}
	}

	private void run() throws Exception {
		int rounds = Integer.parseInt(this.options.getOrDefault("rounds", this.quick ? "1" : "3"));
		int seconds = Integer.parseInt(this.options.getOrDefault("seconds", this.quick ? "2" : "10"));
		int warmSeconds = this.quick ? 2 : 15;
		ZipfTable.write(this.zipfTable, ZIPF_KEYS, ZIPF_S);
		List<Measurement> measurements = measurements(this.routes);
		Properties settings = new Properties();
		settings.setProperty("routes", String.join(",", this.routes));
		settings.setProperty("rounds", String.valueOf(rounds));
		settings.setProperty("seconds", String.valueOf(seconds));
		settings.setProperty("warm_seconds", String.valueOf(warmSeconds));
		settings.setProperty("zipf_s", String.valueOf(ZIPF_S));
		settings.setProperty("zipf_keys", String.valueOf(ZIPF_KEYS));
		double[] cdf = ZipfTable.cdf(ZIPF_KEYS, ZIPF_S);
		settings.setProperty("zipf_top1_share", String.format(Locale.ROOT, "%.4f", ZipfTable.topShare(cdf, 1)));
		settings.setProperty("zipf_top1pct_share",
				String.format(Locale.ROOT, "%.4f", ZipfTable.topShare(cdf, ZIPF_KEYS / 100)));

		checkRoutes();

		logger.info("warm-up: {} s per route and distribution, then passes until the JIT compiler is (nearly) idle",
				warmSeconds);
		for (Measurement m : List.of(measurements.get(0), measurements.get(2))) {
			for (String route : m.routes()) {
				wrk(m, route, warmSeconds, "warm-up");
			}
		}
		census();
		int passes = 0;
		if (!this.quick) {
			// as the end-to-end step: measure only once a pass over every route costs the compiler threads under 3%
			// of one core (on 2 busy cores C2 lags far behind the load); at most 12 passes
			for (; passes < 12; passes++) {
				long before = ProcessCounters.compilerTicks(this.gatewayPid);
				long start = System.nanoTime();
				for (String route : this.routes) {
					wrk(measurements.get(0), route, 3, "warm-up");
				}
				double compilerSeconds = (ProcessCounters.compilerTicks(this.gatewayPid) - before)
						/ (double) this.clockTicks;
				double wall = (System.nanoTime() - start) / 1e9;
				logger.info("JIT compiler CPU over the last {} s of traffic: {} s", BenchmarkMain.fmt(wall),
						BenchmarkMain.fmt(compilerSeconds));
				if (compilerSeconds < 0.03 * wall) {
					break;
				}
			}
			TimeUnit.SECONDS.sleep(5); // an idle pause: the compiler's queue drains
		}
		settings.setProperty("jit_passes", String.valueOf(passes));

		Path tsv = this.out.resolve("routes.tsv");
		Files.deleteIfExists(tsv);
		for (int round = 1; round <= rounds; round++) {
			for (Measurement m : measurements) {
				for (String route : rotate(m.routes(), round)) {
					Tsv.append(tsv, HEADER, measure(m, route, round, seconds));
				}
			}
		}
		idleKeyMemory();
		int profileSeconds = Integer
			.parseInt(this.options.getOrDefault("profile-seconds", this.quick ? "3" : String.valueOf(PROFILE_SECONDS)));
		settings.setProperty("profile_seconds", String.valueOf(profileSeconds));
		settings.setProperty("profile_period_ms", String.valueOf(PROFILE_PERIOD_MS));
		profile(measurements.get(0), profileSeconds, settings);
		try (var writer = Files.newBufferedWriter(this.out.resolve("routes.properties"))) {
			settings.store(writer, "settings of the route comparison");
		}
	}

	/**
	 * A JFR profile of the gateway, after everything else (so no measured run carries a recording): one wrk window on
	 * the route with {@code RateLimit}, then one on the route without a filter, each under a recording of its own
	 * ({@code jcmd JFR.start}/{@code JFR.stop} on the gateway's pid, {@code jdk.ExecutionSample} only, every
	 * {@value #PROFILE_PERIOD_MS} ms), with the gateway's CPU time over the window from {@code /proc}. Before them a
	 * recording with the same settings, thrown away, over passes of {@value #PROFILE_SETTLE_SECONDS} s of load on each
	 * route until a pass costs the JIT compiler threads under 3% of one core (at most {@value #PROFILE_SETTLE_PASSES}
	 * passes, {@code quick} 6): the JVM's first recording makes HotSpot recompile much of the hot code (measured: 13 s
	 * of compiler CPU over 30 s on 2 cores, the throughput down to a few % at first; a second recording none), and
	 * the /rl buckets the idle-key measurement flushed are written again.
	 *
	 * <p>Writes {@code routes-profile.tsv} ({@link GatewayProfile#WINDOW_HEADER}), {@code routes-profile-groups.tsv},
	 * {@code routes-profile-frames.tsv}, the recordings {@code routes-profile-<route>.jfr} and their settings
	 * {@code routes-profile.jfc}. A failure (no {@code jcmd}, no JFR, an unreadable recording) is logged and written
	 * to {@code routes-profile-error.txt}, and the comparison goes on: its measured rounds stay in the report.
	 * @param m the measurement whose wrk invocation the windows use (uniform keys, 32 connections)
	 * @param seconds length of each window; 0 or less: no profile
	 * @param settings where the settling passes and their compiler time are noted ({@code profile_settle_*})
	 */
	private void profile(Measurement m, int seconds, Properties settings) throws IOException {
		for (String name : List.of("routes-profile.tsv", "routes-profile-groups.tsv", "routes-profile-frames.tsv",
				"routes-profile-error.txt")) {
			Files.deleteIfExists(this.out.resolve(name));
		}
		List<String> profiled = new ArrayList<>();
		for (String route : List.of(BenchGateway.RL, BenchGateway.PLAIN)) {
			if (this.routes.contains(route)) {
				profiled.add(route);
			}
		}
		if (seconds <= 0 || profiled.isEmpty()) {
			return;
		}
		try {
			Path jfc = this.out.resolve("routes-profile.jfc");
			Files.writeString(jfc, jfrSettings(PROFILE_PERIOD_MS), StandardCharsets.UTF_8);
			logger.info("profile: a thrown-away recording over passes of {} s per route until the JIT compiler is "
					+ "(nearly) idle, then {} s windows on {}", PROFILE_SETTLE_SECONDS, seconds, profiled);
			jcmd("JFR.start", "name=routes-settle", "settings=" + jfc);
			int passes = 0;
			int maxPasses = this.quick ? 6 : PROFILE_SETTLE_PASSES;
			double compilerSeconds = Double.NaN;
			boolean idle = false;
			while (!idle && passes < maxPasses) {
				passes++;
				long before = ProcessCounters.compilerTicks(this.gatewayPid);
				long start = System.nanoTime();
				for (String route : profiled) {
					wrk(m, route, PROFILE_SETTLE_SECONDS, "profile settle");
				}
				compilerSeconds = (ProcessCounters.compilerTicks(this.gatewayPid) - before) / (double) this.clockTicks;
				double wall = (System.nanoTime() - start) / 1e9;
				logger.info("profile settle pass {}: JIT compiler CPU {} s over {} s of traffic", passes,
						BenchmarkMain.fmt(compilerSeconds), BenchmarkMain.fmt(wall));
				idle = compilerSeconds < 0.03 * wall;
			}
			jcmd("JFR.stop", "name=routes-settle");
			settings.setProperty("profile_settle_idle", String.valueOf(idle));
			settings.setProperty("profile_settle_passes", String.valueOf(passes));
			settings.setProperty("profile_settle_seconds", String.valueOf(PROFILE_SETTLE_SECONDS));
			settings.setProperty("profile_settle_last_compiler_s", BenchmarkMain.fmt(compilerSeconds));
			for (String route : profiled) {
				String name = "routes-profile-" + route;
				Path file = this.out.resolve(name + ".jfr");
				jcmd("JFR.start", "name=" + name, "settings=" + jfc);
				long compilerBefore = ProcessCounters.compilerTicks(this.gatewayPid);
				ProcessCounters before = ProcessCounters.read(this.gatewayPid);
				Instant from = Instant.now();
				WrkResult r = wrk(m, route, seconds, "profile");
				Instant to = Instant.now();
				ProcessCounters after = ProcessCounters.read(this.gatewayPid);
				long compilerTicks = ProcessCounters.compilerTicks(this.gatewayPid) - compilerBefore;
				jcmd("JFR.stop", "name=" + name, "filename=" + file);
				GatewayProfile.Samples samples = GatewayProfile.read(file, from, to);
				double cpuPerRequest = microsPerRequest(after.cpuTicksSince(before), r.requests());
				logger.info("profile {}: {} req/s, gateway CPU {} us/request ({} ms of it JIT compiler), {} samples, {} "
						+ "with a starter frame", route, BenchmarkMain.fmt(r.requestsPerSecond()),
						BenchmarkMain.fmt(cpuPerRequest), compilerTicks * 1000 / this.clockTicks, samples.samples(),
						samples.starterSamples());
				Tsv.append(this.out.resolve("routes-profile.tsv"), GatewayProfile.WINDOW_HEADER,
						List.of(route, m.distribution(), m.keys(), m.connections(), seconds,
								BenchmarkMain.fmt(r.requestsPerSecond()), BenchmarkMain.fmt(r.p99Micros()), r.requests(),
								r.non2xx(), BenchmarkMain.fmt(cpuPerRequest), compilerTicks * 1000 / this.clockTicks,
								samples.samples(), samples.starterSamples(),
								file.getFileName()));
				for (Map.Entry<String, Long> group : samples.byGroup().entrySet()) {
					Tsv.append(this.out.resolve("routes-profile-groups.tsv"), GatewayProfile.GROUP_HEADER,
							List.of(route, group.getKey(), group.getValue()));
				}
				for (Map.Entry<String, Long> frame : samples.byStarterFrame().entrySet()) {
					Tsv.append(this.out.resolve("routes-profile-frames.tsv"), GatewayProfile.FRAME_HEADER,
							List.of(route, frame.getKey(), frame.getValue()));
				}
			}
		}
		catch (Exception ex) {
			logger.warn("no gateway profile: {}", ex.toString());
			Files.writeString(this.out.resolve("routes-profile-error.txt"), ex.toString(), StandardCharsets.UTF_8);
		}
	}

	/**
	 * JFR settings with the execution samples alone.
	 * @param periodMillis their period
	 * @return a {@code .jfc} file's text
	 */
	static String jfrSettings(int periodMillis) {
		return """
				<?xml version="1.0" encoding="UTF-8"?>
				<configuration version="2.0" label="route comparison profile" provider="ratelimit-benchmarks">
				  <event name="jdk.ExecutionSample">
				    <setting name="enabled">true</setting>
				    <setting name="period">%d ms</setting>
				  </event>
				</configuration>
				""".formatted(periodMillis);
	}

	/**
	 * Run one diagnostic command in the gateway (the {@code jcmd} of this JVM's Java, else the one on the PATH).
	 * @param command the command and its arguments, e.g. {@code JFR.start name=x}
	 * @return what jcmd printed
	 * @throws IllegalStateException if jcmd fails, or takes over 60 s
	 */
	private String jcmd(String... command) throws Exception {
		Path own = Path.of(System.getProperty("java.home"), "bin", "jcmd");
		List<String> line = new ArrayList<>(
				List.of(Files.isExecutable(own) ? own.toString() : "jcmd", String.valueOf(this.gatewayPid)));
		line.addAll(List.of(command));
		Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
		String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0 || text.contains("Exception")) {
			process.destroyForcibly();
			throw new IllegalStateException("jcmd failed: " + line + "\n" + text);
		}
		return text;
	}

	/**
	 * The measurements of issue 14 over the given routes: uniform keys at 32 and 4 connections over every route,
	 * Zipf-distributed keys at 32 connections over the route without a filter and the starter's routes.
	 * @param routes the routes the gateway has
	 * @return the measurements, in the order each round runs them
	 */
	static List<Measurement> measurements(List<String> routes) {
		List<String> zipfRoutes = new ArrayList<>();
		for (String route : routes) {
			if (!route.equals(BenchGateway.SCG)) {
				zipfRoutes.add(route);
			}
		}
		return List.of(new Measurement("uniform-c32", "uniform", UNIFORM_KEYS, 32, routes),
				new Measurement("uniform-c4", "uniform", UNIFORM_KEYS, 4, routes),
				new Measurement("zipf-c32", "zipf", ZIPF_KEYS, 32, List.copyOf(zipfRoutes)));
	}

	/**
	 * The list rotated left by {@code round - 1}: round 1 in base order, round 2 starting with the second, ...
	 * @param list the base order
	 * @param round the round, from 1
	 * @return a new list
	 */
	static <T> List<T> rotate(List<T> list, int round) {
		List<T> rotated = new ArrayList<>(list);
		Collections.rotate(rotated, -(round - 1));
		return rotated;
	}

	private List<Object> measure(Measurement m, String route, int round, int seconds) throws Exception {
		ProcessCounters gatewayBefore = ProcessCounters.read(this.gatewayPid);
		ProcessCounters redisBefore = ProcessCounters.read(this.redisPid);
		MachineCounters machineBefore = MachineCounters.read();
		String statsBefore = this.redis.info("commandstats");
		WrkResult r = wrk(m, route, seconds, m.name() + " round " + round);
		String statsAfter = this.redis.info("commandstats");
		Map<String, Long> before = CommandStats.parse(statsBefore);
		Map<String, Long> after = CommandStats.parse(statsAfter);
		ProcessCounters gatewayAfter = ProcessCounters.read(this.gatewayPid);
		ProcessCounters redisAfter = ProcessCounters.read(this.redisPid);
		MachineCounters machineAfter = MachineCounters.read();
		double cpuPerRequest = microsPerRequest(gatewayAfter.cpuTicksSince(gatewayBefore), r.requests());
		double redisCpuPerRequest = microsPerRequest(redisAfter.cpuTicksSince(redisBefore), r.requests());
		double machineCpuPerRequest = microsPerRequest(machineAfter.busyTicksSince(machineBefore), r.requests());
		String gatewaySwitchesPerRequest = perRequest(gatewayAfter.contextSwitchesSince(gatewayBefore), r.requests());
		String redisSwitchesPerRequest = perRequest(redisAfter.contextSwitchesSince(redisBefore), r.requests());
		String machineSwitchesPerRequest = perRequest(machineAfter.contextSwitchesSince(machineBefore), r.requests());
		long scriptCalls = CommandStats.scriptCalls(after) - CommandStats.scriptCalls(before);
		// the INFO that read `after` is not counted; neither is the one that read `before` (allCalls skips info)
		long allCalls = CommandStats.allCalls(after) - CommandStats.allCalls(before);
		long scriptMicros = CommandStats.scriptMicros(CommandStats.micros(statsAfter))
				- CommandStats.scriptMicros(CommandStats.micros(statsBefore));
		double scriptMicrosPerRequest = (double) scriptMicros / Math.max(1, r.requests());
		String scriptMicrosPerCall = (scriptCalls > 0)
				? BenchmarkMain.fmt((double) scriptMicros / scriptCalls) : "NaN";
		logger.info("{} round {} {}: {} req/s, p50 {} us, p99 {} us, CPU us/request: gateway {}, Redis {}, machine {}; "
				+ "context switches/request: gateway {}, Redis {}, machine {}; {} script calls per allowed request, "
				+ "Redis script us/request {} ({} per call), non-2xx {}, socket errors {}", m.name(), round, route,
				BenchmarkMain.fmt(r.requestsPerSecond()), BenchmarkMain.fmt(r.p50Micros()),
				BenchmarkMain.fmt(r.p99Micros()), BenchmarkMain.fmt(cpuPerRequest), BenchmarkMain.fmt(redisCpuPerRequest),
				BenchmarkMain.fmt(machineCpuPerRequest), gatewaySwitchesPerRequest, redisSwitchesPerRequest,
				machineSwitchesPerRequest, perAllowed(scriptCalls, r.allowed()), BenchmarkMain.fmt(scriptMicrosPerRequest),
				scriptMicrosPerCall, r.non2xx(), r.socketErrors());
		return List.of(m.name(), round, route, m.distribution(), m.keys(), m.connections(), seconds,
				BenchmarkMain.fmt(r.requestsPerSecond()), BenchmarkMain.fmt(r.p50Micros()),
				BenchmarkMain.fmt(r.p90Micros()), BenchmarkMain.fmt(r.p99Micros()), r.requests(), r.non2xx(),
				r.socketErrors(), BenchmarkMain.fmt(cpuPerRequest), scriptCalls, allCalls,
				perAllowed(scriptCalls, r.allowed()), perAllowed(allCalls, r.allowed()),
				BenchmarkMain.fmt(redisCpuPerRequest), BenchmarkMain.fmt(machineCpuPerRequest), gatewaySwitchesPerRequest,
				redisSwitchesPerRequest, machineSwitchesPerRequest, BenchmarkMain.fmt(scriptMicrosPerRequest),
				scriptMicrosPerCall);
	}

	/**
	 * CPU time per request.
	 * @param ticks CPU time, clock ticks
	 * @param requests requests answered in that time
	 * @return microseconds per request (per 1 request when none was answered)
	 */
	private double microsPerRequest(long ticks, long requests) {
		return ticks * 1e6 / this.clockTicks / Math.max(1, requests);
	}

	/**
	 * A count per request, 4 decimals.
	 * @param count e.g. context switches
	 * @param requests requests answered
	 * @return e.g. {@code 0.2500}; {@code NaN} with no request
	 */
	static String perRequest(long count, long requests) {
		return (requests > 0) ? String.format(Locale.ROOT, "%.4f", (double) count / requests) : "NaN";
	}

	/**
	 * Calls per allowed request, 4 decimals.
	 * @param calls Redis calls
	 * @param allowed allowed requests
	 * @return e.g. {@code 1.0001}; {@code NaN} with no allowed request
	 */
	static String perAllowed(long calls, long allowed) {
		return (allowed > 0) ? String.format(Locale.ROOT, "%.4f", (double) calls / allowed) : "NaN";
	}

	private URI uri(String route) {
		return URI.create("http://127.0.0.1:" + this.gatewayPort + "/" + route + "/x");
	}

	private WrkResult wrk(Measurement m, String route, int seconds, String label) throws Exception {
		return wrk(m, route, seconds, label, 0);
	}

	/** One wrk run; a uniform rotation starts at key {@code start}. */
	private WrkResult wrk(Measurement m, String route, int seconds, String label, long start) throws Exception {
		List<String> command = List.of("wrk", "-t1", "-c" + m.connections(), "-d" + seconds + "s", "--latency", "-s",
				this.script.toString(), uri(route).toString());
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().put("WRK_KEYS", String.valueOf(m.keys()));
		builder.environment().put("WRK_DISTRIBUTION", m.distribution());
		builder.environment().put("WRK_ZIPF_CDF", this.zipfTable.toString());
		builder.environment().put("WRK_SEED", "1");
		builder.environment().put("WRK_START", String.valueOf(start));
		Process process = builder.start();
		this.wrk.set(process);
		String text;
		try {
			text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(seconds + 60L, TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException("wrk failed: " + command + "\n" + text);
			}
		}
		finally {
			this.wrk.set(null);
			process.destroy();
		}
		Files.writeString(this.out.resolve("routes-wrk.log"),
				"### " + label + ": " + route + ", " + m.distribution() + " over " + m.keys() + " keys\n" + text + "\n",
				StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		return WrkResult.parse(text);
	}

	private void stopWrk() {
		Process process = this.wrk.get();
		if (process != null) {
			process.destroyForcibly();
		}
	}

	/**
	 * Every route answers as configured: 200 from {@code no://op}; the starter's routes carry its RateLimit fields
	 * with the {@value BenchGateway#PLAN} plan's limit for an API key, the anonymous plan's without one (the
	 * fallback to the client IP); Gateway's route its {@code X-RateLimit-Remaining} header.
	 */
	private void checkRoutes() throws Exception {
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		for (String route : this.routes) {
			HttpResponse<Void> keyed = client.send(
					HttpRequest.newBuilder(uri(route)).header(BenchGateway.API_KEY_HEADER, "bench-key-000000").build(),
					HttpResponse.BodyHandlers.discarding());
			if (keyed.statusCode() != 200) {
				throw new IllegalStateException("GET " + uri(route) + " answered " + keyed.statusCode());
			}
			if (route.startsWith(BenchGateway.RL)) {
				String policy = keyed.headers().firstValue("RateLimit-Policy").orElse("");
				if (!policy.contains("q=" + BenchGateway.HIGH_LIMIT)) {
					throw new IllegalStateException(route + ": an API key did not get plan " + BenchGateway.PLAN
							+ "'s limit: RateLimit-Policy '" + policy + "'");
				}
				HttpResponse<Void> anonymous = client.send(HttpRequest.newBuilder(uri(route)).build(),
						HttpResponse.BodyHandlers.discarding());
				String anonymousPolicy = anonymous.headers().firstValue("RateLimit-Policy").orElse("");
				if (anonymousPolicy.isEmpty() || anonymousPolicy.contains("q=" + BenchGateway.HIGH_LIMIT)) {
					throw new IllegalStateException(route + ": a request without an API key should fall back to the "
							+ "anonymous plan (by IP): RateLimit-Policy '" + anonymousPolicy + "'");
				}
				logger.info("{}: with an API key RateLimit-Policy {}; without one {}", route, policy, anonymousPolicy);
			}
			if (route.equals(BenchGateway.SCG) && keyed.headers().firstValue("X-RateLimit-Remaining").isEmpty()) {
				throw new IllegalStateException(route + ": no X-RateLimit-Remaining header: RequestRateLimiter is not on "
						+ "the route");
			}
		}
	}

	/**
	 * Which buckets each limited route touches in one pass over the uniform keys, seen by MONITOR (outside the
	 * measured rounds: MONITOR slows Redis): every API key must be a bucket of its own, none limited by IP.
	 */
	private void census() throws Exception {
		Path tsv = this.out.resolve("routes-census.tsv");
		Files.deleteIfExists(tsv);
		Measurement pass = new Measurement("census", "uniform", UNIFORM_KEYS, 4, this.routes);
		for (String route : this.routes) {
			if (route.equals(BenchGateway.PLAIN)) {
				continue;
			}
			Set<String> keys = ConcurrentHashMap.newKeySet();
			AtomicLong calls = new AtomicLong();
			long requests = 0;
			try (Socket monitor = new Socket("127.0.0.1", this.redisPort())) {
				OutputStream os = monitor.getOutputStream();
				BufferedReader in = new BufferedReader(
						new InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8));
				os.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
				os.flush();
				if (!"+OK".equals(in.readLine())) {
					throw new IllegalStateException("MONITOR refused");
				}
				String marker = "census-end-" + route;
				Thread reader = new Thread(() -> {
					try {
						String line;
						while ((line = in.readLine()) != null && !line.contains(marker)) {
							String key = BucketCensus.scriptKey(line);
							if (key != null) {
								keys.add(key);
								calls.incrementAndGet();
							}
						}
					}
					catch (IOException ex) {
						// closed
					}
				}, "monitor");
				reader.start();
				// runs that each continue the rotation where the last one ended, until every key has been seen with a
				// bucket of its own (MONITOR slows Redis down: on a loaded machine some answers may come from the
				// local fallback, which writes no bucket; the next pass over the keys writes it)
				for (int run = 0; run < 20 && BucketCensus.of(keys).apiKeyBuckets() < UNIFORM_KEYS; run++) {
					requests += wrk(pass, route, 3, "census", requests).requests();
				}
				// every script call of the pass ran before this ECHO: once MONITOR shows it, the pass is all read
				this.redis.echo(marker);
				reader.join(TimeUnit.SECONDS.toMillis(60));
				if (reader.isAlive()) {
					throw new IllegalStateException("MONITOR did not show the end marker within 60 s");
				}
			}
			BucketCensus census = BucketCensus.of(keys);
			logger.info("census {}: {} requests, {} script calls, {} distinct buckets ({} by API key, {} by IP)", route,
					requests, calls.get(), census.distinct(), census.apiKeyBuckets(), census.ipBuckets());
			Tsv.append(tsv, CENSUS_HEADER, List.of(route, UNIFORM_KEYS, requests, calls.get(), census.distinct(),
					census.apiKeyBuckets(), census.ipBuckets(), census.example()));
			if (census.apiKeyBuckets() < UNIFORM_KEYS) {
				logger.warn("{}: {} API keys sent, {} requests, but only {} buckets by API key", route, UNIFORM_KEYS,
						requests, census.apiKeyBuckets());
			}
		}
	}

	private int redisPort() {
		return Integer.parseInt(this.options.get("redis-port"));
	}

	/**
	 * Redis memory per idle token-bucket key: from an empty Redis, one pass (at least) over {@value #IDLE_KEYS} API
	 * keys on the route whose buckets refill slowly, then the growth of {@code used_memory} divided by the bucket
	 * keys written (real key names: the starter's, with hashed API keys).
	 */
	private void idleKeyMemory() throws Exception {
		this.redis.flushall();
		long before = usedMemory();
		Measurement pass = new Measurement("idle-memory", "uniform", IDLE_KEYS, 16, List.of(BenchGateway.IDLE));
		String pattern = "rl:{" + BenchGateway.GROUP_IDLE + "|k:*";
		long sent = 0;
		long bucketKeys = 0;
		// runs that continue the rotation until every key has its bucket (a request answered by the local fallback,
		// should Redis be slow on a loaded machine, writes none: then the next pass writes it)
		for (int run = 0; run < 40 && bucketKeys < IDLE_KEYS; run++) {
			sent += wrk(pass, BenchGateway.IDLE, 5, "idle-memory", sent).requests();
			if (sent >= IDLE_KEYS) {
				bucketKeys = count(pattern);
			}
		}
		long after = usedMemory();
		long all = this.redis.dbsize();
		String example = first(pattern);
		long usage = (example != null) ? this.redis.memoryUsage(example) : 0;
		long ttl = (example != null) ? this.redis.pttl(example) : 0;
		double perKey = (after - before) / (double) Math.max(1, all);
		logger.info("idle keys: {} bucket keys ({} keys in all), {} bytes per key (used_memory), MEMORY USAGE {} B",
				bucketKeys, all, BenchmarkMain.fmt(perKey), usage);
		Path tsv = this.out.resolve("routes-memory.tsv");
		Files.deleteIfExists(tsv);
		Tsv.append(tsv, MEMORY_HEADER, List.of(BenchGateway.IDLE, IDLE_KEYS, bucketKeys, all - bucketKeys, before, after,
				BenchmarkMain.fmt(perKey), usage, ttl, (example != null) ? example : "-"));
		this.redis.flushall();
	}

	private long usedMemory() {
		return Long.parseLong(info(this.redis.info("memory"), "used_memory"));
	}

	static String info(String text, String field) {
		for (String line : text.split("\r?\n")) {
			if (line.startsWith(field + ":")) {
				return line.substring(field.length() + 1).trim();
			}
		}
		throw new IllegalArgumentException("no " + field + " in INFO");
	}

	private long count(String pattern) {
		long n = 0;
		ScanArgs args = ScanArgs.Builder.matches(pattern).limit(10_000);
		io.lettuce.core.KeyScanCursor<String> cursor = this.redis.scan(args);
		while (true) {
			n += cursor.getKeys().size();
			if (cursor.isFinished()) {
				return n;
			}
			cursor = this.redis.scan(ScanCursor.of(cursor.getCursor()), args);
		}
	}

	private String first(String pattern) {
		ScanArgs args = ScanArgs.Builder.matches(pattern).limit(10_000);
		io.lettuce.core.KeyScanCursor<String> cursor = this.redis.scan(args);
		while (cursor.getKeys().isEmpty() && !cursor.isFinished()) {
			cursor = this.redis.scan(ScanCursor.of(cursor.getCursor()), args);
		}
		return cursor.getKeys().isEmpty() ? null : cursor.getKeys().get(0);
	}

	/**
	 * The buckets a set of script keys names.
	 * @param distinct distinct bucket keys
	 * @param apiKeyBuckets of those, the starter's buckets of API key clients ({@code |k:}) or Gateway's limiter's
	 * buckets ({@code request_rate_limiter.{<key>}.tokens})
	 * @param ipBuckets the starter's buckets of clients limited by IP ({@code |ip:})
	 * @param example one key
	 */
	record BucketCensus(int distinct, int apiKeyBuckets, int ipBuckets, String example) {

		/**
		 * The first key of an EVALSHA or EVAL line of MONITOR's output, or null for any other command.
		 * @param monitorLine e.g. {@code 1700000000.123 [0 127.0.0.1:5555] "EVALSHA" "sha" "1" "key" ...}
		 * @return the first key, or null
		 */
		static String scriptKey(String monitorLine) {
			List<String> words = ScriptCapture.wordsForTest(monitorLine);
			if (words.size() < 4 || !(words.get(0).equalsIgnoreCase("EVALSHA") || words.get(0).equalsIgnoreCase("EVAL"))
					|| !words.get(2).matches("[1-9][0-9]*")) {
				return null;
			}
			return words.get(3);
		}

		static BucketCensus of(Set<String> keys) {
			int apiKey = 0;
			int ip = 0;
			String example = "-";
			for (String key : keys) {
				if (key.contains("|k:") || key.startsWith("request_rate_limiter.")) {
					apiKey++;
					example = key;
				}
				else if (key.contains("|ip:")) {
					ip++;
				}
			}
			return new BucketCensus(keys.size(), apiKey, ip, example);
		}

	}

}
