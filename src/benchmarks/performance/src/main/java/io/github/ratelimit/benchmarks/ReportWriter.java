package io.github.ratelimit.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes {@code benchmark-report.md} and its chart from the result files of one harness run: medians over the
 * interleaved rounds, the ratios of issue 6's targets and whether each is met; the route comparison of issue 14 in
 * a section of its own ({@link RouteComparisonReport}); the end-to-end measurement of the Server MVC sample gateway
 * ({@code e2e-mvc.tsv}, per thread kind) in section 8.
 */
final class ReportWriter {

	static final List<String> CONTENDERS = List.of(Contenders.STARTER, Contenders.STARTER_STORE, Contenders.GATEWAY,
			Contenders.BUCKET4J);

	static final Map<String, String> NAMES = Map.of(Contenders.STARTER,
			"starter: `FailurePolicyLimiter` (as the filter calls it)", Contenders.STARTER_STORE,
			"starter: Redis store alone (`RateLimitStore` bean)", Contenders.GATEWAY,
			"Gateway `RedisRateLimiter`", Contenders.BUCKET4J, "Bucket4j Lettuce proxy manager (CAS, async)");

	static final Map<String, String> SHORT = Map.of(Contenders.STARTER, "starter", Contenders.STARTER_STORE,
			"starter store", Contenders.GATEWAY, "Gateway RedisRateLimiter", Contenders.BUCKET4J, "Bucket4j");

	/** The thread kinds of section 8, in the order measured: the {@code threads} column of {@code e2e-mvc.tsv}. */
	private static final List<String> MVC_THREADS = List.of("platform", "virtual");

	/** Headings of section 8 by thread kind. */
	private static final Map<String, String> MVC_THREAD_NAMES = Map.of("platform",
			"Platform threads (Tomcat's thread pool)", "virtual", "Virtual threads");

	/** The build in a {@code java -version} line: {@code OpenJDK Runtime Environment (build 17.0.15+6-...)}. */
	private static final Pattern JAVA_BUILD = Pattern.compile("\\(build ([^)\\s]+)");

	private final Path results;

	private final Properties machine;

	private final Properties versions;

	private final Properties notes;

	private final List<Map<String, String>> ceiling;

	private final List<Map<String, String>> checks;

	private final List<Map<String, String>> open;

	private final List<Map<String, String>> hot;

	private final List<Map<String, String>> e2e;

	private final List<Map<String, String>> e2eMvc;

	private ReportWriter(Path results) throws IOException {
		this.results = results;
		this.machine = properties(results.resolve("machine.properties"));
		this.versions = properties(results.resolve("versions.properties"));
		this.notes = properties(results.resolve("notes.properties"));
		this.ceiling = Tsv.read(results.resolve("ceiling.tsv"));
		this.checks = Tsv.read(results.resolve("checks.tsv"));
		this.open = Tsv.read(results.resolve("openloop.tsv"));
		this.hot = Tsv.read(results.resolve("hotkey.tsv"));
		this.e2e = Tsv.read(results.resolve("e2e.tsv"));
		this.e2eMvc = Tsv.read(results.resolve("e2e-mvc.tsv"));
	}

	static void write(Path results, Path markdown, Path chart) throws IOException {
		ReportWriter writer = new ReportWriter(results);
		Files.createDirectories(markdown.toAbsolutePath().getParent());
		Files.writeString(markdown, writer.markdown(chart.getFileName().toString()), StandardCharsets.UTF_8);
		writer.chart(chart);
	}

	/** A properties file of the results; an absent file has no properties. */
	static Properties properties(Path file) throws IOException {
		Properties p = new Properties();
		if (Files.exists(file)) {
			try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
				p.load(reader);
			}
		}
		return p;
	}

	// ---------------------------------------------------------------- figures

	private static List<Double> column(List<Map<String, String>> rows, Predicate<Map<String, String>> filter,
			String column) {
		List<Double> values = new ArrayList<>();
		for (Map<String, String> row : rows) {
			if (filter.test(row)) {
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

	private static Predicate<Map<String, String>> is(String... pairs) {
		return (row) -> {
			for (int i = 0; i < pairs.length; i += 2) {
				if (!pairs[i + 1].equals(row.get(pairs[i]))) {
					return false;
				}
			}
			return true;
		};
	}

	private double check(String scenario, int concurrency, String contender, String column) {
		return Stats.median(column(this.checks,
				is("scenario", scenario, "concurrency", String.valueOf(concurrency), "contender", contender), column));
	}

	/** Highest median throughput over the concurrencies, and at which. */
	private double[] peak(String scenario, String contender, int... concurrencies) {
		double best = Double.NaN;
		int at = 0;
		for (int c : concurrencies) {
			double v = check(scenario, c, contender, "checks_per_s");
			if (!Double.isNaN(v) && (Double.isNaN(best) || v > best)) {
				best = v;
				at = c;
			}
		}
		return new double[] { best, at };
	}

	private double ceiling(String mode) {
		return Stats.median(column(this.ceiling, is("mode", mode), "rps"));
	}

	private double open(String contender, String column) {
		return Stats.median(column(this.open, is("contender", contender), column));
	}

	private double e2e(String route, String column) {
		return e2e(this.e2e, route, column);
	}

	/** Median over the rounds of one route in end-to-end rows (sections 4 and 8). */
	private static double e2e(List<Map<String, String>> rows, String route, String column) {
		return Stats.median(column(rows, is("route", route), column));
	}

	/** The rows of section 8 for one thread kind. */
	private List<Map<String, String>> mvc(String threads) {
		List<Map<String, String>> rows = new ArrayList<>();
		for (Map<String, String> row : this.e2eMvc) {
			if (threads.equals(row.get("threads"))) {
				rows.add(row);
			}
		}
		return rows;
	}

	private Map<String, String> hotRow(String via, String contender) {
		for (Map<String, String> row : this.hot) {
			if (via.equals(row.get("via")) && contender.equals(row.get("contender"))) {
				return row;
			}
		}
		return null;
	}

	// ---------------------------------------------------------------- markdown

	private String markdown(String chartName) throws IOException {
		StringBuilder md = new StringBuilder();
		md.append("# Benchmark report: the starter against Spring Cloud Gateway's RedisRateLimiter and Bucket4j\n\n");
		md.append("Issue 6. Written by `src/benchmarks/run` (module `ratelimit-benchmarks`) from one run on ")
			.append(m("date"))
			.append(". All figures come from that run, against one freshly started Redis; each contender ran ")
			.append("interleaved with the others (A, B, C, D, then B, C, D, A, ...), and tables give the median of ")
			.append("the rounds. The machine is small and shared (see below): compare ratios within this report, ")
			.append("not absolute numbers across machines. Section 7 compares limiters route against route inside ")
			.append("one gateway process (issue 14), with its own targets.\n\n");
		md.append("![benchmark chart](").append(chartName).append(")\n\n");
		targets(md);
		findings(md);
		machine(md);
		method(md);
		ceilingSection(md);
		checksSection(md);
		openSection(md);
		e2eSection(md);
		hotSection(md);
		profileSection(md);
		new RouteComparisonReport(this.results, this.machine).section(md);
		mvcSection(md);
		return md.toString();
	}

	private String m(String key) {
		return this.machine.getProperty(key, "?");
	}

	private String v(String key) {
		return this.versions.getProperty(key, "?");
	}

	private void targets(StringBuilder md) {
		md.append("## Targets of issue 6\n\n");
		md.append("| target | measured | met? |\n|---|---|---|\n");
		double pipelined = ceiling("pipelined");
		double[] starter = peak("allowed", Contenders.STARTER, 1, 16, 256);
		double[] store = peak("allowed", Contenders.STARTER_STORE, 1, 16, 256);
		double[] gateway = peak("allowed", Contenders.GATEWAY, 1, 16, 256);
		double[] bucket4j = peak("allowed", Contenders.BUCKET4J, 1, 16, 256);
		double r1 = starter[0] / pipelined;
		md.append(String.format(Locale.ROOT,
				"| starter check throughput ≥ 0.7 × pipelined `redis-benchmark` EVALSHA ceiling | %s checks/s (at %d in flight) ÷ %s/s = **%.2f×** (store alone: %s/s, %.2f×) | %s |%n",
				n(starter[0]), (int) starter[1], n(pipelined), r1, n(store[0]), store[0] / pipelined, verdict(r1 >= 0.7)));
		double r2 = starter[0] / gateway[0];
		md.append(String.format(Locale.ROOT,
				"| starter ≥ 1.25 × Gateway's `RedisRateLimiter` (peak vs peak) | %s vs %s checks/s = **%.2f×**; per concurrency: %s | %s |%n",
				n(starter[0]), n(gateway[0]), r2, perConcurrency(Contenders.GATEWAY), verdict(r2 >= 1.25)));
		double r3 = starter[0] / bucket4j[0];
		md.append(String.format(Locale.ROOT,
				"| starter ≥ 2 × Bucket4j (peak vs peak) | %s vs %s checks/s = **%.2f×**; per concurrency: %s | %s |%n",
				n(starter[0]), n(bucket4j[0]), r3, perConcurrency(Contenders.BUCKET4J), verdict(r3 >= 2)));
		double p99 = open(Contenders.STARTER, "p99_us");
		md.append(String.format(Locale.ROOT,
				"| p99 per check ≤ 1 ms at 10,000 checks/s (open loop) | p99 **%s µs** (p99.9 %s µs) | %s |%n", n(p99),
				n(open(Contenders.STARTER, "p999_us")), verdict(p99 <= 1000)));
		double with = e2e("with-filter", "req_per_s");
		double without = e2e("without-filter", "req_per_s");
		double ratio = with / without;
		md.append(String.format(Locale.ROOT,
				"| gateway req/s with the filter ≥ 0.9 × without | %s vs %s req/s = **%.2f×**; p99 %s vs %s µs (+%s µs) | %s |%n",
				n(with), n(without), ratio, n(e2e("with-filter", "p99_us")), n(e2e("without-filter", "p99_us")),
				n(e2e("with-filter", "p99_us") - e2e("without-filter", "p99_us")), verdict(ratio >= 0.9)));
		mvcTarget(md);
		Map<String, String> lib = hotRow("library", Contenders.STARTER);
		Map<String, String> gw = hotRow("gateway", Contenders.STARTER);
		double libCalls = (lib != null) ? Double.parseDouble(lib.get("script_calls_per_denied")) : Double.NaN;
		double gwCalls = (gw != null) ? Double.parseDouble(gw.get("script_calls_per_denied")) : Double.NaN;
		boolean hotMet = !Double.isNaN(libCalls) && libCalls <= 0.02 && (Double.isNaN(gwCalls) || gwCalls <= 0.02);
		md.append(String.format(Locale.ROOT,
				"| hot key far over its limit ≤ 0.02 Redis calls per denied request | **%s** (FailurePolicyLimiter, %s denied); **%s** through the sample gateway (%s denied) | %s |%n%n",
				(lib != null) ? lib.get("script_calls_per_denied") : "not measured",
				(lib != null) ? n(Double.parseDouble(lib.get("denied"))) : "-",
				(gw != null) ? gw.get("script_calls_per_denied") : "not measured",
				(gw != null) ? n(Double.parseDouble(gw.get("denied"))) : "-", verdict(hotMet)));
		md.append("\"Starter\" is the `FailurePolicyLimiter` bean the `RateLimit` filter calls (timeout, circuit ")
			.append("breaker, Micrometer timer, over-limit cache when the starter wires one), over the ")
			.append("`RedisRateLimitStore` store; \"starter store\" is the store bean alone. Throughput is ")
			.append("the best median over 1, 16 and 256 checks in flight (closed loop, almost every check allowed).\n\n");
	}

	/** Observations computed from the figures (no hand-written claims: they follow the numbers of the run). */
	private void findings(StringBuilder md) {
		md.append("## What the figures say\n\n");
		double c1Starter = check("allowed", 1, Contenders.STARTER, "p50_us");
		double c1Store = check("allowed", 1, Contenders.STARTER_STORE, "p50_us");
		double c1Gateway = check("allowed", 1, Contenders.GATEWAY, "p50_us");
		double c1Bucket4j = check("allowed", 1, Contenders.BUCKET4J, "p50_us");
		md.append(String.format(Locale.ROOT,
				"- **One check alone (1 in flight)**, p50: starter %s µs, its store alone %s µs, Gateway's limiter %s µs, Bucket4j %s µs (two round trips: GET, then EVAL). The failure policy around the store (timeout timer, circuit breaker, metrics) changes a lone check's p50 by %+.1f µs.%n",
				n(c1Starter), n(c1Store), n(c1Gateway), n(c1Bucket4j), c1Starter - c1Store));
		for (int c : new int[] { 16, 256 }) {
			double starter = check("allowed", c, Contenders.STARTER, "checks_per_s");
			double store = check("allowed", c, Contenders.STARTER_STORE, "checks_per_s");
			md.append(String.format(Locale.ROOT,
					"- **%d in flight**: starter %s checks/s, store alone %s (starter ÷ store = %.2f×: the price of the policy around the store), Gateway's limiter %s, Bucket4j %s; the unpipelined and pipelined `redis-benchmark` ceilings are %s and %s/s.%n",
					c, n(starter), n(store), starter / store,
					n(check("allowed", c, Contenders.GATEWAY, "checks_per_s")),
					n(check("allowed", c, Contenders.BUCKET4J, "checks_per_s")), n(ceiling("unpipelined")),
					n(ceiling("pipelined"))));
		}
		List<String> cpu = new ArrayList<>();
		for (String contender : CONTENDERS) {
			cpu.add(SHORT.get(contender) + " " + n(open(contender, "cpu_us_per_check")) + " µs");
		}
		md.append("- **CPU per check** at 10,000 checks/s (whole benchmark JVM): ").append(String.join(", ", cpu))
			.append(".\n");
		double redisUs = Stats.median(column(this.ceiling, is("mode", "unpipelined"), "redis_us_per_call"));
		double target = 0.7 * ceiling("pipelined");
		if (!Double.isNaN(redisUs) && !Double.isNaN(target)) {
			double budget = (Double.parseDouble(this.machine.getProperty("nproc", "2")) * 1e6 - target * redisUs)
					/ target;
			md.append(String.format(Locale.ROOT,
					"- **The CPU budget**: Redis spends %s µs per EVALSHA of the script (INFO commandstats). On %s cores shared by Redis and the JVM, %s checks/s (0.7 × the pipelined ceiling) leaves at most **%s µs of CPU per check** for everything else (JVM, kernel network stack, harness), against %s µs measured for the starter at 10,000 checks/s (that figure includes per-check wake-ups that batching at higher load amortizes).%n",
					n(redisUs), this.machine.getProperty("nproc", "2"), n(target), n(budget),
					n(open(Contenders.STARTER, "cpu_us_per_check"))));
		}
		md.append(String.format(Locale.ROOT,
				"- **Over the limit**: the starter answers from its over-limit cache (%s checks/s at 16 in flight, decided by `%s`), while each peer still pays a Redis round trip per denied check (Gateway %s, Bucket4j %s checks/s).%n",
				n(check("over", 16, Contenders.STARTER, "checks_per_s")), sourcesRaw("over", 16, Contenders.STARTER),
				n(check("over", 16, Contenders.GATEWAY, "checks_per_s")),
				n(check("over", 16, Contenders.BUCKET4J, "checks_per_s"))));
		md.append('\n');
	}

	private String sourcesRaw(String scenario, int c, String contender) {
		for (Map<String, String> row : this.checks) {
			if (scenario.equals(row.get("scenario")) && String.valueOf(c).equals(row.get("concurrency"))
					&& contender.equals(row.get("contender"))) {
				return row.get("sources").replaceAll("=\\d+", "");
			}
		}
		return "-";
	}

	private int roundCount() {
		return (int) Stats.max(column(this.checks, (row) -> true, "round"));
	}

	private String perConcurrency(String peer) {
		List<String> parts = new ArrayList<>();
		for (int c : new int[] { 1, 16, 256 }) {
			double ratio = check("allowed", c, Contenders.STARTER, "checks_per_s")
					/ check("allowed", c, peer, "checks_per_s");
			parts.add(String.format(Locale.ROOT, "%.2f× at %d", ratio, c));
		}
		return String.join(", ", parts);
	}

	private static String verdict(boolean met) {
		return met ? "**met**" : "**not met**";
	}

	private void machine(StringBuilder md) {
		md.append("## Machine, versions, command\n\n");
		md.append("| | |\n|---|---|\n");
		row(md, "date", m("date"));
		row(md, "command", "`" + m("command") + "`");
		row(md, "commit", m("git_commit") + " (" + m("git_status") + ")");
		row(md, "CPU", m("cpu_model") + ", `nproc` = " + m("nproc"));
		row(md, "memory", m("memory"));
		row(md, "OS", m("os") + ", kernel " + m("kernel"));
		row(md, "load average (1, 5, 15 min)", "before the measured run: " + m("load_before") + " (waited "
				+ m("load_wait_s") + " s for the 1-min figure to fall below " + m("load_threshold")
				+ "); at the end: " + m("load_after") + "; during the run (1-min figure every 5 s): " + m("load_during")
				+ "; highest per phase: " + m("load_by_phase")
				+ ". The harness' own processes (benchmark JVM or gateway, Redis, wrk) make up most of the load "
				+ "during the run; the figure before it is the one that says whether others were at work");
		row(md, "Java", m("java_version") + "; benchmark JVM `"
				+ v("jvm-args").replace(this.results.toAbsolutePath() + "/", "") + "`");
		row(md, "Redis", m("redis_version") + " (fresh `redis-server` on loopback, no persistence, port chosen free)");
		row(md, "load tools", "`redis-benchmark` " + m("redis_version") + ", " + m("wrk_version"));
		row(md, "libraries", "Spring Boot " + v("spring-boot") + ", Spring Cloud Gateway " + v("spring-cloud-gateway")
				+ ", Spring Data Redis " + v("spring-data-redis") + ", Lettuce " + v("lettuce") + ", Reactor "
				+ v("reactor-core") + ", Reactor Netty " + v("reactor-netty") + ", Resilience4j " + v("resilience4j") + ", Bucket4j " + v("bucket4j")
				+ ", HdrHistogram " + v("hdrhistogram"));
		row(md, "starter beans measured", "`" + v("starter-chain-beans") + " -> " + v("starter-store-bean")
				+ "`; `ratelimit.over-limit-cache.enabled` = " + v("starter-over-limit-cache-enabled")
				+ ", `ratelimit.redis-timeout` = " + v("starter-redis-timeout"));
		row(md, "longest GC pause", m("gc_max_pause_benchmark_ms") + " ms in the benchmark JVM, "
				+ m("gc_max_pause_gateway_ms") + " ms in the sample gateway, " + m("gc_max_pause_routes_gateway_ms")
				+ " ms in the benchmark gateway of section 7 (G1, `-Xlog:gc`)");
		row(md, "starter runs that began with the circuit breaker open (reset first)",
				this.notes.getProperty("breaker-resets", "?"));
		row(md, "wall time of the run", m("run_seconds") + " s (after the build and the load wait)");
		md.append('\n');
	}

	private static void row(StringBuilder md, String key, String value) {
		md.append("| ").append(key).append(" | ").append(value.replace("|", "\\|")).append(" |\n");
	}

	private void method(StringBuilder md) {
		md.append("## Method\n\n");
		md.append("- **Same Redis, same keys, same limits.** One `redis-server` started for the run. ")
			.append(v("keys"))
			.append(" distinct clients per contender, used in rotation. Limits: capacity 1,000,000, refill ")
			.append("1,000,000/s (nearly every check allowed); \"over limit\": every key already empty (starter ")
			.append("and Bucket4j: capacity 1, refill 1 per hour, drained before measuring; Gateway's limiter counts ")
			.append("whole tokens per second, so there a request of 2 tokens against a burst of 1, always denied ")
			.append("through the same script path).\n");
		md.append("- **Each contender set up as its documentation does it.** The starter's beans come from its own ")
			.append("auto-configuration in a Spring Boot context with Boot's Redis auto-configuration (one ")
			.append("`LettuceConnectionFactory`; the starter's limiter opens its own Lettuce connection from that ")
			.append("factory's client, Gateway's limiter uses the factory's shared one) and a Micrometer registry; ")
			.append("Gateway's ")
			.append("`RedisRateLimiter` is built like `GatewayRedisAutoConfiguration` builds it (Boot's ")
			.append("`ReactiveStringRedisTemplate`, `META-INF/scripts/request_rate_limiter.lua`, a ")
			.append("`ConfigurationService`), configured per route as Gateway's tests do; Bucket4j uses ")
			.append("`Bucket4jLettuce.casBasedBuilder(connection)` with `basedOnTimeForRefillingBucketUpToMax` ")
			.append("expiry and its async API (`asAsync()`), one proxy per key built up front.\n");
		md.append("- **The starter's Redis timeout is ").append(v("starter-redis-timeout"))
			.append("**, the sample gateway's setting (the starter's default is 20 ms), in the library runs as in ")
			.append("the gateway: with 256 checks queued on one connection, queueing alone can exceed 20 ms, and the ")
			.append("local fallback's microsecond answers are not what is measured (the peers have no timeout). ")
			.append("Throughput counts only answers decided by Redis or the over-limit cache; the \"decided by\" ")
			.append("columns show any fallback answers, and a starter run that finds the circuit breaker open (after ")
			.append("a stall of the shared machine) resets it first, counted in the table above.\n");
		md.append("- **Closed loop**: N checks in flight; each answer starts the next on the thread that delivered ")
			.append("it, as a reactive caller does. Warm-up first (JIT, connections, then an idle pause so the JIT ")
			.append("compiler's queue drains), then ").append(roundCount())
			.append(" rounds of short windows (2 s) per (concurrency, contender), interleaved, the contender order ")
			.append("rotated each round. Latency is per check (send to answer) in an HdrHistogram.\n");
		md.append("- **Open loop** at 10,000 checks/s: check i is due at start + i/rate whatever happened before, and ")
			.append("its latency is measured from that due time (no coordinated omission: a stall counts against ")
			.append("every check it delays). The sender's own lateness is included (its p99 is listed).\n");
		md.append("- **End to end**: `wrk -t1 -c32 -d10s` through the sample gateway jar, two routes proxying to ")
			.append("the same real upstream, one with `RateLimit` keyed by client IP (`X-Forwarded-For` rotated over ")
			.append("10,000 addresses by a wrk Lua script, `trusted-proxies: 1`), the other without; same gateway ")
			.append("process, interleaved, the order alternating per round, after a warm-up that lasts until 10 s ")
			.append("of traffic on both routes cost the gateway's JIT compiler threads under 0.3 s of CPU (on 2 ")
			.append("shared cores C2 takes a minute or more to compile the proxied path; measuring earlier measures ")
			.append("the compiler). ").append(upstream())
			.append(" Every request of either route is a real proxied request (the gateway's HTTP client, its ")
			.append("connection pool to the upstream, the answer copied back), so the filter's cost is measured ")
			.append("against what a gateway does anyway, not against a route that does nothing.\n");
		md.append("- **Hot client**: one client far over its limit, offered at a fixed rate; Redis calls counted ")
			.append("as the delta of `INFO commandstats` (EVALSHA + EVAL, and all commands but INFO) over the ")
			.append("denied checks.\n\n");
	}

	/** What the end-to-end routes proxy to, as the run started it. */
	private String upstream() {
		// the version comes from the check benchmarks (versions.properties), absent when only step 8 ran
		String version = v("reactor-netty").equals("?") ? "" : " " + v("reactor-netty");
		return "The upstream is `BenchmarkMain upstream` (`Upstream`): a Reactor Netty" + version
				+ " HTTP/1.1 server on loopback and a free port, started by the run in a JVM of its own (`"
				+ m("upstream_jvm_args") + "`, one event-loop thread, no logging), answering every request with "
				+ "200 and the same small body (`" + m("upstream_body") + "`), keep-alive; the run checks that both "
				+ "routes answer with that body before measuring and stops the upstream at the end.";
	}

	private void ceilingSection(StringBuilder md) {
		md.append("## 1. Ceiling: `redis-benchmark` EVALSHA of the starter's script\n\n");
		md.append("The script the starter runs (`").append(m("script_location")).append("`, SHA `")
			.append(m("script_sha"))
			.append("`), loaded with SCRIPT LOAD; keys and arguments exactly as the starter sent them for one check ")
			.append("(captured with MONITOR), the client id replaced by `__rand_int__` with `-r 10000`: keys `")
			.append(m("script_keys")).append("`, ARGV `").append(m("script_argv"))
			.append("` (operation, cost, limit count, then per limit the algorithm code, capacity, refill tokens ")
			.append("and refill period in µs); 50 clients. The script matches the source tree: ")
			.append(m("script_matches_source")).append(".\n\n");
		md.append("| mode | rounds | EVALSHA/s (median) | range | p50 ms | p99 ms | Redis µs per EVALSHA |\n|---|---:|---:|---|---:|---:|---:|\n");
		for (String mode : List.of("unpipelined", "pipelined")) {
			List<Double> rps = column(this.ceiling, is("mode", mode), "rps");
			if (rps.isEmpty()) {
				continue;
			}
			String label = mode.equals("pipelined") ? "pipelined (`-P 16`)" : "unpipelined (`-P 1`)";
			md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s-%s | %s | %s | %s |%n", label, rps.size(),
					n(Stats.median(rps)), n(Stats.min(rps)), n(Stats.max(rps)),
					n3(Stats.median(column(this.ceiling, is("mode", mode), "p50_ms"))),
					n3(Stats.median(column(this.ceiling, is("mode", mode), "p99_ms"))),
					n(Stats.median(column(this.ceiling, is("mode", mode), "redis_us_per_call")))));
		}
		md.append('\n');
	}

	private void checksSection(StringBuilder md) {
		md.append("## 2. Check throughput and latency (closed loop)\n\n");
		for (String scenario : List.of("allowed", "over")) {
			md.append(scenario.equals("allowed") ? "### Almost every check allowed\n\n"
					: "### Every key over its limit (every check denied)\n\n");
			md.append("| in flight | contender | checks/s (median) | range over rounds | p50 µs | p99 µs | p99.9 µs | allowed | decided by (all rounds) |\n");
			md.append("|---:|---|---:|---|---:|---:|---:|---:|---|\n");
			for (int c : new int[] { 1, 16, 256 }) {
				for (String contender : CONTENDERS) {
					List<Double> ops = column(this.checks,
							is("scenario", scenario, "concurrency", String.valueOf(c), "contender", contender),
							"checks_per_s");
					if (ops.isEmpty()) {
						continue;
					}
					md.append(String.format(Locale.ROOT, "| %d | %s | %s | %s-%s | %s | %s | %s | %s%% | %s |%n", c,
							NAMES.get(contender), n(Stats.median(ops)), n(Stats.min(ops)), n(Stats.max(ops)),
							n(check(scenario, c, contender, "p50_us")), n(check(scenario, c, contender, "p99_us")),
							n(check(scenario, c, contender, "p999_us")),
							n(check(scenario, c, contender, "allowed_pct")), sources(scenario, c, contender)));
				}
			}
			md.append('\n');
		}
		md.append("Ratios of the starter (`FailurePolicyLimiter`) to each peer, same concurrency, allowed checks:\n\n");
		md.append("| in flight | ÷ Gateway RedisRateLimiter | ÷ Bucket4j | ÷ pipelined ceiling | ÷ unpipelined ceiling |\n|---:|---:|---:|---:|---:|\n");
		for (int c : new int[] { 1, 16, 256 }) {
			double s = check("allowed", c, Contenders.STARTER, "checks_per_s");
			md.append(String.format(Locale.ROOT, "| %d | %.2f× | %.2f× | %.2f× | %.2f× |%n", c,
					s / check("allowed", c, Contenders.GATEWAY, "checks_per_s"),
					s / check("allowed", c, Contenders.BUCKET4J, "checks_per_s"), s / ceiling("pipelined"),
					s / ceiling("unpipelined")));
		}
		md.append('\n');
	}

	/** Decisions by source summed over the rounds, e.g. {@code SHARED=120000}. */
	private String sources(String scenario, int c, String contender) {
		Map<String, Long> sum = new java.util.TreeMap<>();
		for (Map<String, String> row : this.checks) {
			if (scenario.equals(row.get("scenario")) && String.valueOf(c).equals(row.get("concurrency"))
					&& contender.equals(row.get("contender"))) {
				for (String part : row.get("sources").split(";")) {
					String[] kv = part.split("=");
					if (kv.length == 2) {
						sum.merge(kv[0], Long.parseLong(kv[1]), Long::sum);
					}
				}
			}
		}
		if (sum.isEmpty()) {
			return "-";
		}
		StringBuilder text = new StringBuilder();
		sum.forEach((k, v) -> text.append(text.isEmpty() ? "" : ";").append(k).append('=').append(v));
		return "`" + text + "`";
	}

	private void openSection(StringBuilder md) {
		md.append("## 3. Latency at a fixed offered load (open loop)\n\n");
		md.append("| contender | offered/s | achieved/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | sender lateness p99 µs | JVM CPU µs per check | errors |\n");
		md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (String contender : CONTENDERS) {
			if (column(this.open, is("contender", contender), "p99_us").isEmpty()) {
				continue;
			}
			md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
					NAMES.get(contender), n(open(contender, "target_per_s")), n(open(contender, "achieved_per_s")),
					n(open(contender, "p50_us")), n(open(contender, "p90_us")), n(open(contender, "p99_us")),
					n(open(contender, "p999_us")), n(open(contender, "max_us")), n(open(contender, "send_lag_p99_us")),
					n(open(contender, "cpu_us_per_check")), n(open(contender, "errors"))));
		}
		md.append("\nMedians over ").append(column(this.open, is("contender", Contenders.STARTER), "p99_us").size())
			.append(" interleaved rounds. The sender thread sleeps until each due time (timer slack included), so ")
			.append("the figures include the harness' own scheduling delay. JVM CPU per check: CPU time of the whole ")
			.append("benchmark JVM (every thread, including the sender and GC) during the run, divided by the checks ")
			.append("sent: the cost of one check on this machine, whatever the latency.\n\n");
	}

	private void e2eSection(StringBuilder md) {
		md.append("## 4. End to end through the sample gateway\n\n");
		if (this.e2e.isEmpty()) {
			md.append("Not measured in this run.\n\n");
			return;
		}
		md.append(upstream()).append("\n\n");
		e2eTable(md, this.e2e);
		double ratio = e2e("with-filter", "req_per_s") / e2e("without-filter", "req_per_s");
		md.append(String.format(Locale.ROOT,
				"%nWith the filter: **%.2f×** the requests per second of the same route without it; p99 added: **%s µs**, p50 added: %s µs. ",
				ratio, n(e2e("with-filter", "p99_us") - e2e("without-filter", "p99_us")),
				n(e2e("with-filter", "p50_us") - e2e("without-filter", "p50_us"))));
		md.append(String.format(Locale.ROOT,
				"The filter costs the gateway process **%s µs of CPU per request** (%s against %s µs; CPU time of the gateway process from /proc over each wrk run, divided by its requests, the upstream's likewise; wrk, Redis, the upstream and the gateway share the 2 cores). ",
				n(e2e("with-filter", "cpu_us_per_req") - e2e("without-filter", "cpu_us_per_req")),
				n(e2e("with-filter", "cpu_us_per_req")), n(e2e("without-filter", "cpu_us_per_req"))));
		md.append("For scale, DESIGN.md measured Gateway's own `RequestRateLimiter` + `RedisRateLimiter` at 0.17× ")
			.append("on this kind of machine (6.5-6.7k against 38-40k req/s), with routes to `no://op`: a baseline ")
			.append("that forwards nothing, so that ratio is harsher than this one. wrk latencies are closed-loop ")
			.append("(coordinated omission applies); the fixed-load figures of section 3 are the latency reference.\n\n");
		md.append("Gateway JVM: `").append(m("gateway_jvm_args")).append("`; arguments: `")
			.append(m("gateway_args")).append("`.\n\n");
	}

	/** The table of sections 4 and 8: both routes, medians over the rounds of {@code rows}. */
	private static void e2eTable(StringBuilder md, List<Map<String, String>> rows) {
		md.append("| route | rounds | req/s (median) | range | p50 µs | p90 µs | p99 µs | gateway CPU µs per request | upstream CPU µs per request | non-2xx | decisions of the filter (last round) |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
		for (String route : List.of("without-filter", "with-filter")) {
			List<Double> rps = column(rows, is("route", route), "req_per_s");
			String decisions = "-";
			for (Map<String, String> row : rows) {
				if (route.equals(row.get("route")) && route.equals("with-filter")) {
					decisions = "`" + row.getOrDefault("outcomes", "-") + "`";
				}
			}
			md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s-%s | %s | %s | %s | %s | %s | %s | %s |%n",
					route.equals("with-filter") ? "`/rl/**` with `RateLimit` (key-by ip)" : "`/plain/**` without",
					rps.size(), n(Stats.median(rps)), n(Stats.min(rps)), n(Stats.max(rps)), n(e2e(rows, route, "p50_us")),
					n(e2e(rows, route, "p90_us")), n(e2e(rows, route, "p99_us")), n(e2e(rows, route, "cpu_us_per_req")),
					n(e2e(rows, route, "upstream_cpu_us_per_req")), n(e2e(rows, route, "non2xx")), decisions));
		}
	}

	/** The target row of section 8: section 4's rule (with ÷ without ≥ 0.9), for every thread kind measured. */
	private void mvcTarget(StringBuilder md) {
		List<String> measured = new ArrayList<>();
		boolean met = true;
		for (String threads : MVC_THREADS) {
			List<Map<String, String>> rows = mvc(threads);
			if (rows.isEmpty()) {
				continue;
			}
			double with = e2e(rows, "with-filter", "req_per_s");
			double without = e2e(rows, "without-filter", "req_per_s");
			double ratio = with / without;
			met &= ratio >= 0.9;
			measured.add(String.format(Locale.ROOT, "%s threads (Java %s): %s vs %s req/s = **%.2f×**; p99 %s vs %s µs (%s µs)",
					threads, mvcJava(threads), n(with), n(without), ratio, n(e2e(rows, "with-filter", "p99_us")),
					n(e2e(rows, "without-filter", "p99_us")),
					signed(e2e(rows, "with-filter", "p99_us") - e2e(rows, "without-filter", "p99_us"))));
		}
		md.append("| Server MVC gateway req/s with the filter ≥ 0.9 × without | ")
			.append(measured.isEmpty() ? "not measured in this run" : String.join("; ", measured))
			.append(" | ")
			.append(verdict(!measured.isEmpty() && met))
			.append(" |\n");
	}

	/** The Java a thread kind of section 8 ran on, short: its build ({@code 17.0.15+6-...}), else its version line. */
	private String mvcJava(String threads) {
		String line = this.machine.getProperty("mvc_" + threads + "_java", "?");
		Matcher build = JAVA_BUILD.matcher(line);
		return build.find() ? build.group(1) : line;
	}

	private void mvcSection(StringBuilder md) {
		md.append("## 8. End to end through the Server MVC sample gateway\n\n");
		if (this.e2eMvc.isEmpty()) {
			md.append("Not measured in this run.\n\n");
			return;
		}
		md.append("Section 4's measurement on the Server MVC sample gateway (`sample-gateway-mvc`: Spring Cloud ")
			.append("Gateway Server MVC on Tomcat, with the starter's Server MVC `RateLimit` filter): `wrk -t1 -c32`, ")
			.append("the route `/rl/**` with `RateLimit` (group `bench`, key-by ip) against `/plain/**` without it in ")
			.append("the same gateway process, both proxying to the same upstream (routes in ")
			.append("`src/benchmarks/gateway-mvc-routes.yml`, the limits of section 4), `X-Forwarded-For` rotated over ")
			.append("10,000 addresses, the same Redis (emptied before each gateway starts), a warm-up until 10 s of ")
			.append("traffic on both routes cost the gateway's JIT compiler threads under 0.3 s of CPU, then ")
			.append("interleaved rounds, the order alternating per round; medians of the rounds. It runs once per ")
			.append("thread kind, each in a gateway process of its own, both on the Java 21 or newer the run found ")
			.append("(on the default Java, platform threads only, when there is none): with requests on Tomcat's ")
			.append("platform thread pool, then with virtual threads (`spring.threads.virtual.enabled`). The ratio ")
			.append("inside one process compares like with like; the two processes ran one after the other. ")
			.append(upstream())
			.append("\n\n");
		for (String threads : MVC_THREADS) {
			List<Map<String, String>> rows = mvc(threads);
			md.append("### ").append(MVC_THREAD_NAMES.get(threads));
			if (rows.isEmpty()) {
				String note = this.machine.getProperty("mvc_" + threads + "_note", "");
				md.append("\n\nNot measured in this run").append(note.isBlank() ? "" : ": " + note).append(".\n\n");
				continue;
			}
			md.append(" on Java ").append(mvcJava(threads)).append("\n\n");
			e2eTable(md, rows);
			md.append(String.format(Locale.ROOT,
					"%nWith the filter: **%.2f×** the requests per second of the same route without it; p99 added: **%s µs**, p50 added: %s µs. ",
					e2e(rows, "with-filter", "req_per_s") / e2e(rows, "without-filter", "req_per_s"),
					n(e2e(rows, "with-filter", "p99_us") - e2e(rows, "without-filter", "p99_us")),
					n(e2e(rows, "with-filter", "p50_us") - e2e(rows, "without-filter", "p50_us"))));
			md.append(String.format(Locale.ROOT,
					"The filter costs the gateway process **%s µs of CPU per request** (%s against %s µs; CPU time of the gateway process from /proc over each wrk run, divided by its requests, the upstream's likewise; wrk, Redis, the upstream and the gateway share the %s cores).%n%n",
					n(e2e(rows, "with-filter", "cpu_us_per_req") - e2e(rows, "without-filter", "cpu_us_per_req")),
					n(e2e(rows, "with-filter", "cpu_us_per_req")), n(e2e(rows, "without-filter", "cpu_us_per_req")),
					m("nproc")));
			String prefix = "mvc_" + threads + "_";
			md.append("Requests ran on ").append(threads).append(" threads: ").append(m(prefix + "threads"))
				.append(". Java: `").append(m(prefix + "java")).append("` (`").append(m(prefix + "java_path"))
				.append("`); gateway JVM: `").append(m(prefix + "jvm_args").strip())
				.append("` (GC ").append(m(prefix + "gc"))
				.append(", longest pause ").append(m(prefix + "gc_max_pause_ms"))
				.append(" ms); arguments: `").append(m(prefix + "args"))
				.append("`; warm-up: ").append(m(prefix + "warm_up_s")).append(" s of traffic.\n\n");
		}
	}

	private void hotSection(StringBuilder md) {
		md.append("## 5. A hot client far over its limit: Redis calls per denied request\n\n");
		md.append("| via | contender | offered | checks | denied | EVALSHA+EVAL calls | all commands | script calls per denied | all commands per denied | decided by |\n");
		md.append("|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
		for (Map<String, String> row : this.hot) {
			String via = row.get("via").equals("gateway") ? "sample gateway (wrk)" : "library";
			String name = row.get("via").equals("gateway") ? "starter (`RateLimit` filter)" : NAMES.get(row.get("contender"));
			String offered = row.get("offered_per_s");
			offered = offered.equals("closed") ? "wrk -c32, " + row.get("seconds") + " s"
					: offered + "/s for " + row.get("seconds") + " s";
			md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | `%s` |%n", via, name,
					offered, n(Double.parseDouble(row.get("checks"))), n(Double.parseDouble(row.get("denied"))),
					row.get("script_calls"), row.get("all_calls"), row.get("script_calls_per_denied"),
					row.get("all_calls_per_denied"), row.get("sources")));
		}
		md.append("\nLimits of the hot client: starter and Bucket4j 10 per minute (capacity 10), Gateway's ")
			.append("`RedisRateLimiter` 1 per second (burst 10; its finest rate). The bucket is emptied by a burst ")
			.append("before counting starts. \"All commands\" counts what `INFO commandstats` counts: the commands ")
			.append("scripts run inside Redis too (TIME, HMGET, GET, SETEX, ...), so it is not a count of round trips; ")
			.append("EVALSHA+EVAL is (for the starter and Gateway's limiter, every round trip is one script call; ")
			.append("Bucket4j's compare-and-swap reads with a plain GET and writes with EVAL, and a denial writes ")
			.append("nothing, so its denials cost one GET round trip each). The gateway row's \"decided by\" comes ")
			.append("from the starter's own meters (`ratelimit.decisions`, `ratelimit.check.duration` by source).\n\n");
	}

	private void profileSection(StringBuilder md) throws IOException {
		md.append("## 6. Where the time goes (JFR)\n\n");
		for (String name : List.of("profile-check.md", "profile-gateway.md")) {
			Path file = this.results.resolve(name);
			if (Files.exists(file)) {
				md.append(Files.readString(file, StandardCharsets.UTF_8)).append('\n');
			}
		}
		Path notes = this.results.resolve("profile-notes.md");
		if (Files.exists(notes)) {
			md.append(Files.readString(notes, StandardCharsets.UTF_8)).append('\n');
		}
	}

	// ---------------------------------------------------------------- chart

	private void chart(Path file) throws IOException {
		List<String> series = new ArrayList<>();
		for (String c : CONTENDERS) {
			series.add(SHORT.get(c));
		}
		List<String> groups = List.of("1 in flight", "16 in flight", "256 in flight");
		double[][] ops = new double[CONTENDERS.size()][3];
		double[][] p99 = new double[CONTENDERS.size()][4];
		int[] cs = { 1, 16, 256 };
		for (int s = 0; s < CONTENDERS.size(); s++) {
			for (int g = 0; g < 3; g++) {
				ops[s][g] = check("allowed", cs[g], CONTENDERS.get(s), "checks_per_s");
				p99[s][g] = check("allowed", cs[g], CONTENDERS.get(s), "p99_us");
			}
			p99[s][3] = open(CONTENDERS.get(s), "p99_us");
		}
		List<Chart.RefLine> ceilings = new ArrayList<>();
		if (!Double.isNaN(ceiling("pipelined"))) {
			ceilings.add(new Chart.RefLine("redis-benchmark -P 16", ceiling("pipelined"), Color.RED));
		}
		if (!Double.isNaN(ceiling("unpipelined"))) {
			ceilings.add(new Chart.RefLine("redis-benchmark -P 1", ceiling("unpipelined"), Color.GRAY));
		}
		List<Chart.Panel> panels = new ArrayList<>();
		panels.add(new Chart.Panel("Checks per second, allowed (median of rounds)", "checks/s", groups, series, ops,
				false, ceilings));
		List<String> latencyGroups = List.of("1 in flight", "16 in flight", "256 in flight", "10k/s open loop");
		panels.add(new Chart.Panel("p99 latency per check (µs, log scale)", "µs", latencyGroups, series, p99, true,
				List.of(new Chart.RefLine("1 ms target (open loop)", 1000, Color.RED))));
		double[][] e2eValues = { { e2e("without-filter", "req_per_s") }, { e2e("with-filter", "req_per_s") } };
		panels.add(new Chart.Panel(
				String.format(Locale.ROOT, "Sample gateway, wrk -c32: req/s (with filter = %.2f× without)",
						e2eValues[1][0] / e2eValues[0][0]),
				"req/s", List.of("route to the upstream"), List.of("without RateLimit", "with RateLimit"), e2eValues, false,
				List.of()));
		Map<String, String> hotLabels = Map.of(Contenders.STARTER, "starter", Contenders.STARTER_STORE, "store",
				Contenders.GATEWAY, "Gateway RRL", Contenders.BUCKET4J, "Bucket4j");
		List<String> hotGroups = new ArrayList<>();
		double[][] hotArray = new double[2][this.hot.size()];
		for (int i = 0; i < this.hot.size(); i++) {
			Map<String, String> row = this.hot.get(i);
			hotGroups.add(row.get("via").equals("gateway") ? "via gateway" : hotLabels.get(row.get("contender")));
			hotArray[0][i] = Math.max(1e-4, Double.parseDouble(row.get("script_calls_per_denied")));
			hotArray[1][i] = Math.max(1e-4, Double.parseDouble(row.get("all_calls_per_denied")));
		}
		panels.add(new Chart.Panel("Hot client: Redis calls per denied request (log scale)", "calls", hotGroups,
				List.of("EVALSHA+EVAL", "all commands, incl. inside scripts (floor 0.0001)"), hotArray, true,
				List.of(new Chart.RefLine("target", 0.02, Color.RED))));
		Chart.write(file, "Rate limit checks on " + m("nproc") + " cores, Redis " + m("redis_version") + " on loopback ("
				+ m("date") + ")", panels, 2);
	}

	// ---------------------------------------------------------------- formatting

	static String n(double v) {
		if (Double.isNaN(v)) {
			return "-";
		}
		if (Math.abs(v) >= 100) {
			return String.format(Locale.ROOT, "%,.0f", v);
		}
		return String.format(Locale.ROOT, "%.1f", v);
	}

	/** {@link #n} with its sign: {@code +100}, {@code -56,100}. */
	static String signed(double v) {
		return (v >= 0 ? "+" : "") + n(v);
	}

	static String n3(double v) {
		return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.3f", v);
	}

}
