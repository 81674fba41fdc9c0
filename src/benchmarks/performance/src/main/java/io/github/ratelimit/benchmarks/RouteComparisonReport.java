package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import static io.github.ratelimit.benchmarks.ReportWriter.n;

/**
 * The report's section on the route comparison inside one gateway ({@link RouteComparison}, issue 14): the issue's
 * targets (measured, met?), then the raw tables: medians over the interleaved rounds per measurement and route,
 * the bucket census and the Redis memory per idle key. Ratios are ratios of the medians.
 */
final class RouteComparisonReport {

	/** Throughput of {@code RateLimit} at least this share of the route without a filter (uniform, 32 connections). */
	static final double TARGET_RL_VS_PLAIN = 0.6;

	/** Throughput of {@code RateLimit} at least this multiple of Gateway's {@code RequestRateLimiter}. */
	static final double TARGET_RL_VS_SCG = 2.4;

	/** p99 latency {@code RateLimit} adds over the route without a filter at 4 connections, at most, µs. */
	static final double TARGET_P99_ADDED_US = 300;

	/** Throughput with token leases at least this share of the route without a filter (Zipf keys). */
	static final double TARGET_LEASE_VS_PLAIN = 0.85;

	/** Redis calls per allowed request with token leases (Zipf keys), at most. */
	static final double TARGET_LEASE_CALLS = 0.2;

	/** Redis memory per idle token-bucket key, at most, bytes. */
	static final double TARGET_IDLE_KEY_BYTES = 150;

	private static final Map<String, String> ROUTE_NAMES = Map.of(BenchGateway.PLAIN, "`/plain` no filter",
			BenchGateway.RL, "`/rl` `RateLimit` (key-by api-key)", BenchGateway.RL_LEASE,
			"`/rl-lease` `RateLimit`, lease " + BenchGateway.LEASE, BenchGateway.SCG,
			"`/scg` Gateway `RequestRateLimiter` + `RedisRateLimiter`");

	private static final List<String> ROUTE_ORDER = List.of(BenchGateway.PLAIN, BenchGateway.RL,
			BenchGateway.RL_LEASE, BenchGateway.SCG);

	private final List<Map<String, String>> rows;

	private final List<Map<String, String>> census;

	private final List<Map<String, String>> memory;

	private final List<Map<String, String>> profileWindows;

	private final List<Map<String, String>> profileGroups;

	private final List<Map<String, String>> profileFrames;

	private final String profileError;

	private final Properties gateway;

	private final Properties settings;

	private final Properties machine;

	RouteComparisonReport(Path results, Properties machine) throws IOException {
		this.rows = Tsv.read(results.resolve("routes.tsv"));
		this.census = Tsv.read(results.resolve("routes-census.tsv"));
		this.memory = Tsv.read(results.resolve("routes-memory.tsv"));
		this.profileWindows = Tsv.read(results.resolve("routes-profile.tsv"));
		this.profileGroups = Tsv.read(results.resolve("routes-profile-groups.tsv"));
		this.profileFrames = Tsv.read(results.resolve("routes-profile-frames.tsv"));
		Path error = results.resolve("routes-profile-error.txt");
		this.profileError = Files.exists(error) ? Files.readString(error, StandardCharsets.UTF_8).trim() : null;
		this.gateway = ReportWriter.properties(results.resolve("routes-gateway.properties"));
		this.settings = ReportWriter.properties(results.resolve("routes.properties"));
		this.machine = machine;
	}

	/**
	 * Median of a column over the rounds of one measurement and route.
	 * @param measurement e.g. {@code uniform-c32}
	 * @param route e.g. {@code rl}
	 * @param column e.g. {@code req_per_s}
	 * @return the median, {@code NaN} if not measured
	 */
	double median(String measurement, String route, String column) {
		return Stats.median(values(measurement, route, column));
	}

	private List<Double> values(String measurement, String route, String column) {
		List<Double> values = new ArrayList<>();
		for (Map<String, String> row : this.rows) {
			if (measurement.equals(row.get("measurement")) && route.equals(row.get("route"))) {
				try {
					values.add(Double.parseDouble(row.get(column)));
				}
				catch (RuntimeException ex) {
					// not measured
				}
			}
		}
		return values;
	}

	/**
	 * Ratio of two routes' median throughput in one measurement.
	 * @return {@code NaN} if either was not measured
	 */
	double ratio(String measurement, String route, String baseline) {
		return median(measurement, route, "req_per_s") / median(measurement, baseline, "req_per_s");
	}

	/** The Redis memory per idle key measured, bytes, or {@code NaN}. */
	double idleKeyBytes() {
		return this.memory.isEmpty() ? Double.NaN : Double.parseDouble(this.memory.get(0).get("bytes_per_key"));
	}

	void section(StringBuilder md) {
		md.append("## 7. Routes in one gateway process (issues 14 and 29)\n\n");
		if (this.rows.isEmpty()) {
			md.append("Not measured in this run.\n\n");
			return;
		}
		md.append("One minimal gateway (`BenchmarkMain gateway`, `BenchGateway`: Spring Cloud Gateway and the starter, ")
			.append("no actuator, no meter registry), its routes to `no://op` (the gateway answers 200 itself, no ")
			.append("upstream), so what differs between two routes is the filter alone: the same JVM, the same Redis, ")
			.append("the same per-request Spring work. Every API key is a client of its own (a `PlanResolver` bean ")
			.append("maps any key to plan `").append(BenchGateway.PLAN).append("`, capacity 1,000,000, refill ")
			.append("1,000,000/s: nothing is denied); Gateway's `RequestRateLimiter` is configured as its ")
			.append("documentation does (`redis-rate-limiter.replenishRate` = `burstCapacity` = 1,000,000, a ")
			.append("`KeyResolver` bean reading `X-API-Key`). `wrk -t1` with `src/benchmarks/api-keys.lua`: uniform ")
			.append("rotation over ").append(n(RouteComparison.UNIFORM_KEYS)).append(" keys, or a Zipf law (s = ")
			.append(this.settings.getProperty("zipf_s", "?")).append(") over ").append(n(RouteComparison.ZIPF_KEYS))
			.append(" keys (the hottest key draws ").append(pct(this.settings.getProperty("zipf_top1_share")))
			.append(" of the requests, the top 1% of keys ").append(pct(this.settings.getProperty("zipf_top1pct_share")))
			.append("; cumulative table from `BenchmarkMain zipf-table`, binary search per request, seed 1). ")
			.append(this.settings.getProperty("rounds", "?")).append(" interleaved rounds of ")
			.append(this.settings.getProperty("seconds", "?"))
			.append(" s per measurement and route, the route order rotated each round; tables give medians, ")
			.append("ratios are ratios of medians. Warm-up: ").append(this.settings.getProperty("warm_seconds", "?"))
			.append(" s per route and distribution, then ").append(this.settings.getProperty("jit_passes", "?"))
			.append(" passes of 3 s per route until a pass cost the gateway's JIT compiler threads under 3% of one ")
			.append("core. Gateway CPU per request: utime + stime of the gateway process (`/proc/<pid>/stat`) over a ")
			.append("run, divided by its requests; over the same window Redis' likewise (`redis-server`'s ")
			.append("`/proc/<pid>/stat`), the machine's non-idle time on all cores (`/proc/stat`: user + nice + system + ")
			.append("irq + softirq + steal, so wrk, the driver and any other process count too), and context switches: ")
			.append("voluntary + nonvoluntary of every thread of the gateway and of Redis (`/proc/<pid>/task/*/status`, ")
			.append("threads that ended during a run not counted) and the machine's (`ctxt` of `/proc/stat`). ")
			.append("Redis calls: deltas of `INFO commandstats` over a run (EVALSHA + ")
			.append("EVAL; all commands but INFO, including those scripts run inside Redis), divided by the allowed ")
			.append("requests. Redis script µs: the growth of `usec` of EVALSHA + EVAL in `INFO commandstats` over ")
			.append("a run (the time Redis' main thread spent executing the scripts, the commands they call ")
			.append("included; wall time on a monotonic clock, so a preempted script counts its wait too and on a busy ")
			.append("machine the figure can exceed Redis' CPU), per request and per script call (a call carries several checks when the starter ")
			.append("batches them, fewer with leases): beside Redis' CPU per request from `/proc`, it shows how much ")
			.append("of Redis' CPU per check is the script itself and how much reading, parsing and answering the ")
			.append("calls. Lease route: ").append(leaseState()).append(".\n\n");
		targets(md);
		fallbackNote(md);
		for (String measurement : List.of("uniform-c32", "uniform-c4", "zipf-c32")) {
			measurementTable(md, measurement);
		}
		ratios(md);
		censusTable(md);
		memoryTable(md);
		profileSection(md);
		md.append("Benchmark gateway JVM: `").append(this.machine.getProperty("routes_gateway_jvm_args", "?"))
			.append("`; plan resolver `").append(this.gateway.getProperty("plan_resolver", "?"))
			.append("`, Gateway key resolver `").append(this.gateway.getProperty("key_resolver", "?"))
			.append("`. Raw wrk output: `routes-wrk.log`.\n\n");
	}

	private String leaseState() {
		if (Boolean.parseBoolean(this.gateway.getProperty("leases", "false"))) {
			return "on (`lease: " + BenchGateway.LEASE + "`, `ratelimit.leases.duration` default)";
		}
		return "not measured: " + (Boolean.parseBoolean(this.gateway.getProperty("starter_has_leases", "false"))
				? "turned off with `LEASES=0`" : "the starter on the class path has no per-limit `lease` property yet");
	}

	private void targets(StringBuilder md) {
		md.append("### Issue 29 targets\n\n| target | measured | met? |\n|---|---|---|\n");
		double rlPlain = ratio("uniform-c32", BenchGateway.RL, BenchGateway.PLAIN);
		md.append(String.format(Locale.ROOT,
				"| `RateLimit` ≥ %.1f × no filter (req/s, uniform %s keys, 32 connections) | %s vs %s req/s = **%s** | %s |%n",
				TARGET_RL_VS_PLAIN, n(RouteComparison.UNIFORM_KEYS), n(median("uniform-c32", BenchGateway.RL, "req_per_s")),
				n(median("uniform-c32", BenchGateway.PLAIN, "req_per_s")), x(rlPlain),
				verdict(rlPlain, rlPlain >= TARGET_RL_VS_PLAIN)));
		double rlScg = ratio("uniform-c32", BenchGateway.RL, BenchGateway.SCG);
		md.append(String.format(Locale.ROOT,
				"| `RateLimit` ≥ %.1f × Gateway's `RequestRateLimiter` (same) | %s vs %s req/s = **%s** | %s |%n",
				TARGET_RL_VS_SCG, n(median("uniform-c32", BenchGateway.RL, "req_per_s")),
				n(median("uniform-c32", BenchGateway.SCG, "req_per_s")), x(rlScg), verdict(rlScg, rlScg >= TARGET_RL_VS_SCG)));
		double added = p99Added(BenchGateway.RL);
		md.append(String.format(Locale.ROOT,
				"| p99 added by `RateLimit` over no filter ≤ %.1f ms (4 connections) | %s vs %s µs: **%s µs** | %s |%n",
				TARGET_P99_ADDED_US / 1000, n(median("uniform-c4", BenchGateway.RL, "p99_us")),
				n(median("uniform-c4", BenchGateway.PLAIN, "p99_us")), signed(added),
				verdict(added, added <= TARGET_P99_ADDED_US)));
		double lease = ratio("zipf-c32", BenchGateway.RL_LEASE, BenchGateway.PLAIN);
		double rlZipf = ratio("zipf-c32", BenchGateway.RL, BenchGateway.PLAIN);
		md.append(String.format(Locale.ROOT,
				"| with leases ≥ %.2f × no filter (req/s, Zipf over %s keys, 32 connections) | %s (without leases: %s) | %s |%n",
				TARGET_LEASE_VS_PLAIN, n(RouteComparison.ZIPF_KEYS),
				Double.isNaN(lease) ? "not measured" : String.format(Locale.ROOT, "%s vs %s req/s = **%s**",
						n(median("zipf-c32", BenchGateway.RL_LEASE, "req_per_s")),
						n(median("zipf-c32", BenchGateway.PLAIN, "req_per_s")), x(lease)),
				x(rlZipf), verdict(lease, lease >= TARGET_LEASE_VS_PLAIN)));
		double calls = median("zipf-c32", BenchGateway.RL_LEASE, "script_calls_per_allowed");
		double all = median("zipf-c32", BenchGateway.RL_LEASE, "all_calls_per_allowed");
		md.append(String.format(Locale.ROOT,
				"| with leases ≤ %.1f Redis calls per allowed request (Zipf; the commands the gateway sends, a batch of checks is one) | %s (without leases: %s EVALSHA+EVAL, %s all commands) | %s |%n",
				TARGET_LEASE_CALLS,
				Double.isNaN(calls) ? "not measured"
						: String.format(Locale.ROOT, "**%.4f** EVALSHA+EVAL, %.4f all commands (with those the scripts run)",
								calls, all),
				n4(median("zipf-c32", BenchGateway.RL, "script_calls_per_allowed")),
				n4(median("zipf-c32", BenchGateway.RL, "all_calls_per_allowed")),
				verdict(calls, calls <= TARGET_LEASE_CALLS)));
		double bytes = idleKeyBytes();
		md.append(String.format(Locale.ROOT,
				"| Redis memory per idle token-bucket key ≤ %.0f B (at %s keys) | %s | %s |%n%n", TARGET_IDLE_KEY_BYTES,
				n(RouteComparison.IDLE_KEYS),
				Double.isNaN(bytes) ? "not measured"
						: String.format(Locale.ROOT, "**%s B** (`used_memory` growth over %s keys)", n(bytes),
								n(Double.parseDouble(this.memory.get(0).get("bucket_keys")))),
				verdict(bytes, bytes <= TARGET_IDLE_KEY_BYTES)));
	}

	/**
	 * Runs of a route without leases that made fewer script calls than allowed requests: the starter's local
	 * fallback (Redis slower than its timeout, or the circuit breaker open) answered part of them.
	 */
	private void fallbackNote(StringBuilder md) {
		List<String> runs = new ArrayList<>();
		for (Map<String, String> row : this.rows) {
			String route = row.get("route");
			// only Gateway's limiter sends one command per check: the starter batches a loop turn's checks
			if (route.equals(BenchGateway.SCG)) {
				double calls = Double.parseDouble(row.get("script_calls_per_allowed"));
				if (calls < 0.98) {
					runs.add(String.format(Locale.ROOT, "%s round %s `%s` (%.3f)", row.get("measurement"),
							row.get("round"), route, calls));
				}
			}
		}
		if (!runs.isEmpty()) {
			md.append("Runs with fewer than one EVALSHA/EVAL per allowed request, where something other than Redis ")
				.append("answered part of the requests (the starter's local fallback: Redis slower than its timeout, ")
				.append("or its circuit breaker open), so their req/s overstate the filter: ")
				.append(String.join(", ", runs)).append(".\n\n");
		}
	}

	/** p99 a route adds over the route without a filter at 4 connections, µs. */
	double p99Added(String route) {
		return median("uniform-c4", route, "p99_us") - median("uniform-c4", BenchGateway.PLAIN, "p99_us");
	}

	private void measurementTable(StringBuilder md, String measurement) {
		String title = switch (measurement) {
			case "uniform-c32" -> "Uniform over " + n(RouteComparison.UNIFORM_KEYS) + " keys, 32 connections";
			case "uniform-c4" -> "Uniform over " + n(RouteComparison.UNIFORM_KEYS) + " keys, 4 connections (latency)";
			default -> "Zipf over " + n(RouteComparison.ZIPF_KEYS) + " keys, 32 connections";
		};
		md.append("### ").append(title).append("\n\n");
		md.append("| route | rounds | req/s (median) | range | p50 µs | p90 µs | p99 µs | gateway CPU µs per request | Redis CPU µs per request | Redis script µs per request | Redis script µs per call | machine CPU µs per request | gateway context switches per request | Redis context switches per request | machine context switches per request | EVALSHA+EVAL per allowed | all commands per allowed | non-2xx | socket errors |\n");
		md.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (String route : ROUTE_ORDER) {
			List<Double> rps = values(measurement, route, "req_per_s");
			if (rps.isEmpty()) {
				continue;
			}
			md.append(String.format(Locale.ROOT,
					"| %s | %d | %s | %s-%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
					ROUTE_NAMES.get(route), rps.size(), n(Stats.median(rps)), n(Stats.min(rps)), n(Stats.max(rps)),
					n(median(measurement, route, "p50_us")), n(median(measurement, route, "p90_us")),
					n(median(measurement, route, "p99_us")), n(median(measurement, route, "cpu_us_per_req")),
					n(median(measurement, route, "redis_cpu_us_per_req")),
					n(median(measurement, route, "redis_script_us_per_req")),
					n(median(measurement, route, "redis_script_us_per_call")),
					n(median(measurement, route, "machine_cpu_us_per_req")),
					n2(median(measurement, route, "gateway_cs_per_req")),
					n2(median(measurement, route, "redis_cs_per_req")),
					n2(median(measurement, route, "machine_cs_per_req")),
					n4(median(measurement, route, "script_calls_per_allowed")),
					n4(median(measurement, route, "all_calls_per_allowed")), n(median(measurement, route, "non2xx")),
					n(median(measurement, route, "socket_errors"))));
		}
		md.append('\n');
	}

	private void ratios(StringBuilder md) {
		md.append("### Ratios and what each filter costs\n\n");
		md.append("| measurement | route | req/s ÷ no filter | req/s ÷ `RequestRateLimiter` | p99 added µs | gateway CPU added µs per request | Redis CPU added µs per request | Redis script added µs per request | machine CPU added µs per request |\n");
		md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
		for (String measurement : List.of("uniform-c32", "uniform-c4", "zipf-c32")) {
			for (String route : ROUTE_ORDER) {
				if (route.equals(BenchGateway.PLAIN) || values(measurement, route, "req_per_s").isEmpty()) {
					continue;
				}
				md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", measurement,
						ROUTE_NAMES.get(route), x(ratio(measurement, route, BenchGateway.PLAIN)),
						route.equals(BenchGateway.SCG) ? "-" : x(ratio(measurement, route, BenchGateway.SCG)),
						signed(added(measurement, route, "p99_us")), signed(added(measurement, route, "cpu_us_per_req")),
						signed(added(measurement, route, "redis_cpu_us_per_req")),
						signed(added(measurement, route, "redis_script_us_per_req")),
						signed(added(measurement, route, "machine_cpu_us_per_req"))));
			}
		}
		md.append('\n');
	}

	/** A column's median on a route minus on the route without a filter, in one measurement. */
	private double added(String measurement, String route, String column) {
		return median(measurement, route, column) - median(measurement, BenchGateway.PLAIN, column);
	}

	private void censusTable(StringBuilder md) {
		if (this.census.isEmpty()) {
			return;
		}
		md.append("### Buckets: every API key a client of its own\n\n");
		md.append("Seen by `MONITOR` (the first key of every EVALSHA/EVAL) during one whole pass over the uniform keys ")
			.append("at 4 connections, before the measured rounds.\n\n");
		md.append("| route | API keys sent | requests | script calls | distinct buckets | by API key | by IP (anonymous plan) | example key |\n");
		md.append("|---|---:|---:|---:|---:|---:|---:|---|\n");
		for (Map<String, String> row : this.census) {
			md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | `%s` |%n",
					ROUTE_NAMES.getOrDefault(row.get("route"), row.get("route")), row.get("keys_sent"), row.get("requests"),
					row.get("script_calls"), row.get("distinct_buckets"), row.get("api_key_buckets"),
					row.get("ip_buckets"), cell(row.get("example_key"))));
		}
		md.append('\n');
	}

	private void memoryTable(StringBuilder md) {
		if (this.memory.isEmpty()) {
			return;
		}
		Map<String, String> row = this.memory.get(0);
		md.append("### Redis memory per idle token-bucket key\n\n");
		md.append("From an empty Redis (FLUSHALL), one request per API key on `/idle` (`RateLimit`, plan `")
			.append(BenchGateway.PLAN).append("`, group `").append(BenchGateway.GROUP_IDLE)
			.append("`: capacity 100, refill 100 per day, so the bucket stays after one request), then the growth of ")
			.append("`INFO memory` `used_memory` (key, value, expiry, hash-table overhead) divided by the keys; real ")
			.append("key names (the starter's, with hashed API keys).\n\n");
		md.append("| API keys sent | bucket keys | other keys | used_memory before | after | per key | MEMORY USAGE of one key | its TTL ms | example key |\n");
		md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
		md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s B | %s B | %s | `%s` |%n%n",
				n(Double.parseDouble(row.get("keys_sent"))), n(Double.parseDouble(row.get("bucket_keys"))),
				row.get("other_keys"), n(Double.parseDouble(row.get("used_memory_before"))),
				n(Double.parseDouble(row.get("used_memory_after"))), row.get("bytes_per_key"),
				row.get("memory_usage_one_key"), row.get("ttl_ms_one_key"), cell(row.get("example_key"))));
	}

	/** Starter frames the profile section lists, the most sampled first. */
	static final int PROFILE_FRAMES = 20;

	/**
	 * Where the gateway's time goes: µs per request by leaf group on {@code /rl}, on {@code /plain} and their
	 * difference, and the innermost starter frames on {@code /rl} (the method of
	 * {@code src/docs/reports/request-thread/profile.md}).
	 */
	private void profileSection(StringBuilder md) {
		md.append("### Where the gateway's time goes (JFR)\n\n");
		if (this.profileWindows.isEmpty()) {
			md.append((this.profileError != null) ? "Not recorded in this run: `" + this.profileError + "`.\n\n"
					: "Not recorded in this run.\n\n");
			return;
		}
		String jvmArgs = this.machine.getProperty("routes_gateway_jvm_args", "");
		Map<String, String> first = this.profileWindows.get(0);
		md.append("After the measured rounds and the idle-key measurement, one `wrk -t1 -c")
			.append(first.get("connections")).append(" -d").append(first.get("seconds")).append("s` window (")
			.append(first.get("distribution")).append(" over ").append(n(Double.parseDouble(first.get("keys"))))
			.append(" keys, as in the rounds) per route, each under a JFR recording of its own of the gateway (`jcmd ")
			.append("<pid> JFR.start`, `jdk.ExecutionSample` alone, every ")
			.append(this.settings.getProperty("profile_period_ms", "?"))
			.append(" ms). Before them a recording with the same settings, thrown away: a JVM's first recording ")
			.append("makes HotSpot recompile much of the hot code, for half a minute or more on 2 cores, a second one ")
			.append("does not; under it ").append(this.settings.getProperty("profile_settle_passes", "?"))
			.append(" passes of ").append(this.settings.getProperty("profile_settle_seconds", "?"))
			.append(" s per route, ")
			.append(Boolean.parseBoolean(this.settings.getProperty("profile_settle_idle", "false"))
					? "until a pass cost the JIT compiler threads under 3% of one core (the last: "
					: "the most it runs, and the JIT compiler was still busy (the last pass: ")
			.append(this.settings.getProperty("profile_settle_last_compiler_s", "?")).append(" s of compiler CPU). ")
			.append(jvmArgs.contains("DebugNonSafepoints")
					? "The gateway's JVM runs with `-XX:+DebugNonSafepoints`, so a sample names the method running, "
							+ "inlined or not, rather than the nearest safepoint. "
					: "The gateway's JVM ran without `-XX:+DebugNonSafepoints`: samples are placed at safepoints, "
							+ "inlined methods charged to their callers. ")
			.append("Only samples taken inside the wrk window count. µs per request = a row's share of the window's ")
			.append("samples × the gateway process' CPU time per request over the window (`/proc/<pid>/stat`, the ")
			.append("recording's own sampling included): an apportionment, as JFR samples threads running Java code ")
			.append("only; the kernel's time (sockets), the GC's and the JIT compiler's are spread in proportion. ")
			.append("Recordings: ");
		List<String> files = new ArrayList<>();
		for (Map<String, String> window : this.profileWindows) {
			files.add("`" + window.get("jfr") + "`");
		}
		md.append(String.join(", ", files)).append(" (JDK Mission Control, or `jfr print --events ExecutionSample`).\n\n");
		md.append("| route | req/s | p99 µs | gateway CPU µs per request | the same in the rounds (median, uniform-c32) | of the window's CPU, JIT compiler threads | execution samples | samples with a starter frame |\n");
		md.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Map<String, String> window : this.profileWindows) {
			String route = window.get("route");
			double cpuSeconds = Double.parseDouble(window.get("cpu_us_per_req"))
					* Long.parseLong(window.get("requests")) / 1e6;
			md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %,d | %,d |%n",
					ROUTE_NAMES.getOrDefault(route, route), n(Double.parseDouble(window.get("req_per_s"))),
					n(Double.parseDouble(window.get("p99_us"))), n(Double.parseDouble(window.get("cpu_us_per_req"))),
					n(median("uniform-c32", route, "cpu_us_per_req")),
					share(Long.parseLong(window.get("compiler_ms")), Math.round(cpuSeconds * 1000)),
					Long.parseLong(window.get("samples")), Long.parseLong(window.get("starter_samples"))));
		}
		md.append('\n');
		groupTable(md);
		frameTable(md);
	}

	/** µs per request by leaf group, {@code /rl}, {@code /plain} and the difference, the largest difference first. */
	private void groupTable(StringBuilder md) {
		Map<String, Long> rl = profileCounts(this.profileGroups, BenchGateway.RL, "group");
		Map<String, Long> plain = profileCounts(this.profileGroups, BenchGateway.PLAIN, "group");
		long rlTotal = profileSamples(BenchGateway.RL);
		long plainTotal = profileSamples(BenchGateway.PLAIN);
		double rlCpu = profileCpu(BenchGateway.RL);
		double plainCpu = profileCpu(BenchGateway.PLAIN);
		Set<String> groups = new LinkedHashSet<>(rl.keySet());
		groups.addAll(plain.keySet());
		List<String> order = new ArrayList<>(groups);
		order.sort(Comparator.comparingDouble((String g) -> micros(rl.getOrDefault(g, 0L), rlTotal, rlCpu)
				- micros(plain.getOrDefault(g, 0L), plainTotal, plainCpu))
			.reversed()
			.thenComparing(Comparator.naturalOrder()));
		md.append("#### Self samples by package group of the leaf frame\n\n");
		md.append("| group | /rl samples | /rl share | /rl µs/req | /plain samples | /plain share | /plain µs/req | /rl − /plain µs/req |\n");
		md.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
		for (String group : order) {
			groupRow(md, group, rl.getOrDefault(group, 0L), rlTotal, rlCpu, plain.getOrDefault(group, 0L), plainTotal,
					plainCpu);
		}
		groupRow(md, "total", rlTotal, rlTotal, rlCpu, plainTotal, plainTotal, plainCpu);
		md.append('\n');
	}

	private static void groupRow(StringBuilder md, String group, long rl, long rlTotal, double rlCpu, long plain,
			long plainTotal, double plainCpu) {
		double rlMicros = micros(rl, rlTotal, rlCpu);
		double plainMicros = micros(plain, plainTotal, plainCpu);
		md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %d | %s | %s | %s |%n", group, rl,
				share(rl, rlTotal), n2(rlMicros), plain, share(plain, plainTotal), n2(plainMicros),
				signed2(rlMicros - plainMicros)));
	}

	/** The innermost starter frames on {@code /rl}, the most sampled first. */
	private void frameTable(StringBuilder md) {
		Map<String, Long> frames = profileCounts(this.profileFrames, BenchGateway.RL, "frame");
		long total = profileSamples(BenchGateway.RL);
		double cpu = profileCpu(BenchGateway.RL);
		if (frames.isEmpty() || total == 0) {
			return;
		}
		long starter = frames.values().stream().mapToLong(Long::longValue).sum();
		List<Map.Entry<String, Long>> entries = new ArrayList<>(frames.entrySet());
		entries.sort(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
		md.append("#### Innermost starter frame (`io.github.ratelimit.*`, top ").append(PROFILE_FRAMES)
			.append("), /rl\n\n");
		md.append(String.format(Locale.ROOT,
				"%,d of the %,d samples (%s, %s µs/request) have a starter frame on the stack; each counts once, for the "
						+ "starter frame nearest its leaf. A frame that continues the reactive chain (a callback "
						+ "completing the decision) carries the rest of the request's work run from it too: its row is "
						+ "an upper bound of the starter's own work.%n%n",
				starter, total, share(starter, total), n2(micros(starter, total, cpu))));
		md.append("| frame | samples | share | µs/request |\n|---|---:|---:|---:|\n");
		for (Map.Entry<String, Long> e : entries.subList(0, Math.min(PROFILE_FRAMES, entries.size()))) {
			md.append(String.format(Locale.ROOT, "| `%s` | %d | %s | %s |%n", e.getKey(), e.getValue(),
					share(e.getValue(), total), n2(micros(e.getValue(), total, cpu))));
		}
		md.append('\n');
	}

	private static Map<String, Long> profileCounts(List<Map<String, String>> rows, String route, String column) {
		Map<String, Long> counts = new HashMap<>();
		for (Map<String, String> row : rows) {
			if (route.equals(row.get("route"))) {
				counts.merge(row.get(column), Long.parseLong(row.get("samples")), Long::sum);
			}
		}
		return counts;
	}

	/** Execution samples in a route's profile window, 0 if it was not profiled. */
	private long profileSamples(String route) {
		for (Map<String, String> window : this.profileWindows) {
			if (route.equals(window.get("route"))) {
				return Long.parseLong(window.get("samples"));
			}
		}
		return 0;
	}

	/** The gateway's CPU µs per request over a route's profile window, {@code NaN} if it was not profiled. */
	private double profileCpu(String route) {
		for (Map<String, String> window : this.profileWindows) {
			if (route.equals(window.get("route"))) {
				return Double.parseDouble(window.get("cpu_us_per_req"));
			}
		}
		return Double.NaN;
	}

	/** A count's share of the samples × CPU µs per request; {@code NaN} without samples. */
	static double micros(long count, long total, double cpuPerRequest) {
		return (total > 0) ? cpuPerRequest * count / total : Double.NaN;
	}

	private static String share(long count, long total) {
		return (total > 0) ? String.format(Locale.ROOT, "%.1f%%", 100.0 * count / total) : "-";
	}

	private static String signed2(double v) {
		return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%+.2f", v);
	}

	/** A table cell's text: a {@code |} (in Redis key names) escaped. */
	private static String cell(String text) {
		return (text == null) ? "-" : text.replace("|", "\\|");
	}

	private static String verdict(double measured, boolean met) {
		if (Double.isNaN(measured)) {
			return "not measured";
		}
		return met ? "**met**" : "**not met**";
	}

	static String x(double ratio) {
		return Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.2f×", ratio);
	}

	private static String signed(double v) {
		return Double.isNaN(v) ? "-" : ((v >= 0) ? "+" : "") + n(v);
	}

	private static String n2(double v) {
		return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
	}

	private static String n4(double v) {
		return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.4f", v);
	}

	private static String pct(String share) {
		return (share == null) ? "?" : String.format(Locale.ROOT, "%.1f%%", 100 * Double.parseDouble(share));
	}

}
