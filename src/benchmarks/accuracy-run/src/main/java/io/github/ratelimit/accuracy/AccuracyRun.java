package io.github.ratelimit.accuracy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.accuracy.GatewayInstance.Sample;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.test.redis.RedisServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accuracy harness of issue 4 (a benchmark, not a test). For each algorithm: N simulated gateway instances (by
 * default each its own JVM with its own Lettuce client, see {@link GatewayInstance}) send one client's checks, in
 * total k times the plan's rate, for a while, against one real Redis; the run reports admitted against theory and
 * the most admitted in any window of the limit's length, as a Markdown table, and draws a PNG chart.
 *
 * <pre>
 * src/benchmarks/accuracy                      # N=20, k=5, 60 s, every algorithm; writes src/docs/reports/accuracy-report.md
 * src/benchmarks/accuracy --duration 10s --instances 5 --out target/accuracy
 * </pre>
 *
 * Options: {@code --instances N} (20), {@code --overload k} (5), {@code --duration} (60s), {@code --capacity} (50)
 * and {@code --window} (100ms): the plan, {@code --algorithms} (all, comma-separated), {@code --mode processes|clients}
 * (separate JVMs, or separate clients in this JVM), {@code --redis redis://host:port} (else a redis-server from the
 * PATH is started), {@code --out DIR} (where accuracy-report.md and accuracy-chart.png go), {@code --seed}.
 *
 * <p>Token leases (issue 14): {@code --lease 2%} (or {@code off}, the default; a comma-separated list such as
 * {@code off,2%} runs each in turn) and {@code --lease-duration 1s}: each instance then checks through the starter's
 * {@code LeasingRateLimiter} ({@link GatewayInstance}); token buckets only, the window algorithms run without. Every
 * token-bucket run is checked strictly against its upper bound ({@link UpperBound}): if any interval admitted more than
 * {@code capacity + rate × its length}, the report says so and the run exits with status 1.
 */
public final class AccuracyRun {

	private static final Logger logger = LoggerFactory.getLogger(AccuracyRun.class);

	private final Options options;

	private AccuracyRun(Options options) {
		this.options = options;
	}

	/**
	 * Run from the command line.
	 * @param args see the class description
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		List<AccuracyAnalysis> runs = run(options);
		String report = report(options, runs, String.join(" ", args));
		Files.createDirectories(options.out());
		Files.writeString(options.out().resolve("accuracy-report.md"), report);
		AccuracyChart.write(runs, title(options), Math.min(2.0, options.duration().toMillis() / 1000.0),
				options.out().resolve("accuracy-chart.png"));
		System.out.println(report);
		logger.info("Report and chart written to {}", options.out().toAbsolutePath());
		List<String> exceeded = boundViolations(runs);
		if (!exceeded.isEmpty()) {
			for (String violation : exceeded) {
				System.err.println("UPPER BOUND EXCEEDED: " + violation);
			}
			System.exit(1);
		}
		System.exit(0);
	}

	/**
	 * The token-bucket runs that admitted more than {@code capacity + rate × t} over some interval (leases or not).
	 * @param runs the analyses
	 * @return one message per such run, empty if none
	 */
	static List<String> boundViolations(List<AccuracyAnalysis> runs) {
		List<String> violations = new ArrayList<>();
		for (AccuracyAnalysis run : runs) {
			if (run.plan().algorithm() == Algorithm.TOKEN_BUCKET && !run.upperBound().holds()) {
				violations.add(run.label() + ": " + run.upperBound().violation());
			}
		}
		return violations;
	}

	/**
	 * Run every algorithm of the options.
	 * @param options what to run
	 * @return one analysis per algorithm
	 * @throws Exception on failure
	 */
	public static List<AccuracyAnalysis> run(Options options) throws Exception {
		return new AccuracyRun(options).execute();
	}

	private List<AccuracyAnalysis> execute() throws Exception {
		RedisServer own = null;
		String redis = this.options.redis();
		if (redis == null) {
			own = RedisServer.start();
			redis = own.uri();
			logger.info("Started {}", own);
		}
		try {
			List<AccuracyAnalysis> runs = new ArrayList<>();
			for (Algorithm algorithm : this.options.algorithms()) {
				Plan plan = new Plan(algorithm, this.options.capacity(), this.options.window());
				for (Leases leases : this.options.leasesFor(plan)) {
					flush(redis);
					long[] calls = { -1 };
					List<Sample> samples = (this.options.mode() == Mode.PROCESSES)
							? inProcesses(redis, plan, leases, calls) : inClients(redis, plan, leases, calls);
					AccuracyAnalysis analysis = AccuracyAnalysis.of(plan, samples, leases, calls[0]);
					logger.info("{}", analysis);
					if (algorithm == Algorithm.TOKEN_BUCKET && !analysis.upperBound().holds()) {
						logger.error("UPPER BOUND EXCEEDED ({}): {}", analysis.label(),
								analysis.upperBound().violation());
					}
					runs.add(analysis);
				}
			}
			return runs;
		}
		finally {
			if (own != null) {
				own.close();
			}
		}
	}

	private static void flush(String redisUri) {
		try (RedisAdmin admin = new RedisAdmin(redisUri)) {
			admin.flushAll();
		}
	}

	/** Script calls Redis has run so far (EVALSHA + EVAL in {@code INFO commandstats}), -1 if unreadable. */
	private static long scriptCalls(String redisUri) {
		try (RedisAdmin admin = new RedisAdmin(redisUri)) {
			return parseScriptCalls(String.valueOf(admin.command("INFO", "commandstats")));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not read INFO commandstats: {}", ex.toString());
			return -1;
		}
	}

	/**
	 * The script calls in an {@code INFO commandstats} reply: the {@code calls} of {@code cmdstat_evalsha} and
	 * {@code cmdstat_eval}.
	 * @param info the reply
	 * @return the sum (0 if neither is listed)
	 */
	static long parseScriptCalls(String info) {
		long calls = 0;
		for (String line : info.split("\r?\n")) {
			String l = line.trim();
			if (l.startsWith("cmdstat_evalsha:") || l.startsWith("cmdstat_eval:")) {
				for (String field : l.substring(l.indexOf(':') + 1).split(",")) {
					if (field.startsWith("calls=")) {
						calls += Long.parseLong(field.substring(6));
					}
				}
			}
		}
		return calls;
	}

	/** Per instance: rate k × plan rate / N, and a phase in [0, interval) from the seed. */
	private long[] phases(Random random, double ratePerInstance) {
		long[] phases = new long[this.options.instances()];
		for (int i = 0; i < phases.length; i++) {
			phases[i] = (long) (random.nextDouble() * 1e6 / ratePerInstance);
		}
		return phases;
	}

	private double ratePerInstance(Plan plan) {
		return this.options.overload() * plan.ratePerSecond() / this.options.instances();
	}

	private List<Sample> inClients(String redis, Plan plan, Leases leases, long[] calls) throws Exception {
		int n = this.options.instances();
		double rate = ratePerInstance(plan);
		long[] phases = phases(new Random(this.options.seed()), rate);
		List<GatewayInstance> instances = new ArrayList<>();
		ExecutorService threads = Executors.newFixedThreadPool(n);
		try {
			for (int i = 0; i < n; i++) {
				GatewayInstance instance = new GatewayInstance(redis, plan, leases);
				instance.warmUp();
				instances.add(instance);
			}
			long before = scriptCalls(redis);
			long start = GatewayInstance.nowMicros() + 500_000;
			long duration = this.options.duration().toNanos() / 1000;
			List<Future<List<Sample>>> futures = new ArrayList<>();
			for (int i = 0; i < n; i++) {
				GatewayInstance instance = instances.get(i);
				long phase = phases[i];
				futures.add(threads.submit(() -> instance.run(start, duration, rate, phase)));
			}
			List<Sample> all = new ArrayList<>();
			for (Future<List<Sample>> future : futures) {
				all.addAll(future.get());
			}
			instances.forEach(GatewayInstance::close);
			instances.clear();
			long after = scriptCalls(redis);
			calls[0] = (before < 0 || after < 0) ? -1 : after - before;
			return all;
		}
		finally {
			threads.shutdownNow();
			instances.forEach(GatewayInstance::close);
		}
	}

	private List<Sample> inProcesses(String redis, Plan plan, Leases leases, long[] calls) throws Exception {
		int n = this.options.instances();
		double rate = ratePerInstance(plan);
		long[] phases = phases(new Random(this.options.seed()), rate);
		Path dir = Files.createTempDirectory("accuracy-");
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		List<Process> processes = new ArrayList<>();
		boolean succeeded = false;
		try {
			for (int i = 0; i < n; i++) {
				// small JVMs: one GC thread, few compiler and event-loop threads, so N of them share few cores
				ProcessBuilder builder = new ProcessBuilder(java, "-Xmx96m", "-XX:+UseSerialGC",
						"-XX:TieredStopAtLevel=1", "-XX:ActiveProcessorCount=1", "-cp",
						System.getProperty("java.class.path"),
						GatewayInstance.class.getName(), redis, plan.algorithm().name(),
						Long.toString(plan.capacity()), Long.toString(plan.window().toMillis()), Double.toString(rate),
						Long.toString(phases[i]), Long.toString(this.options.duration().toNanos() / 1000),
						dir.resolve("instance-" + i + ".txt").toString(), Double.toString(leases.budgetPercent()),
						Long.toString(leases.duration().toMillis()));
				builder.redirectError(dir.resolve("instance-" + i + ".log").toFile());
				processes.add(builder.start());
			}
			for (int i = 0; i < n; i++) {
				BufferedReader out = new BufferedReader(
						new InputStreamReader(processes.get(i).getInputStream(), StandardCharsets.UTF_8));
				String line = out.readLine();
				if (!"READY".equals(line)) {
					throw new IllegalStateException("instance " + i + " did not start: " + line + "; see "
							+ dir.resolve("instance-" + i + ".log"));
				}
			}
			long before = scriptCalls(redis);
			long start = GatewayInstance.nowMicros() + 2_000_000;
			for (Process process : processes) {
				Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
				in.write("START " + start + "\n");
				in.flush();
			}
			List<Sample> all = new ArrayList<>();
			long deadline = this.options.duration().toMillis() + 60_000;
			for (int i = 0; i < n; i++) {
				Process process = processes.get(i);
				if (!process.waitFor(deadline, TimeUnit.MILLISECONDS) || process.exitValue() != 0) {
					throw new IllegalStateException("instance " + i + " failed; see "
							+ dir.resolve("instance-" + i + ".log"));
				}
				for (String line : Files.readAllLines(dir.resolve("instance-" + i + ".txt"))) {
					all.add(Sample.fromLine(line));
				}
			}
			long after = scriptCalls(redis);
			calls[0] = (before < 0 || after < 0) ? -1 : after - before;
			succeeded = true;
			return all;
		}
		finally {
			for (Process process : processes) {
				process.destroyForcibly();
			}
			if (succeeded) {
				try (var files = Files.list(dir)) {
					for (Path file : files.toList()) {
						Files.deleteIfExists(file);
					}
				}
				Files.deleteIfExists(dir);
			}
			else {
				// the instances' logs are the evidence of what failed: kept
				logger.error("Instance logs kept in {}", dir);
			}
		}
	}

	private static String title(Options o) {
		return String.format(Locale.ROOT, "One client at %s× its plan (%d per %d ms), %d instances, %d s, one Redis%s",
				trim(o.overload()), o.capacity(), o.window().toMillis(), o.instances(), o.duration().toSeconds(),
				o.anyLeases() ? ", token leases " + o.leaseBudgets().stream()
					.map((b) -> (b == 0) ? "off" : trim(b) + "%").distinct().reduce((a, b) -> a + " / " + b).orElse("")
						+ " (" + formatDuration(o.leaseDuration()) + ")" : "");
	}

	/**
	 * The Markdown report.
	 * @param o the options
	 * @param runs the analyses
	 * @param args the command-line arguments used
	 * @return the report
	 */
	static String report(Options o, List<AccuracyAnalysis> runs, String args) {
		StringBuilder md = new StringBuilder();
		double rate = runs.get(0).plan().ratePerSecond();
		md.append("# Accuracy report\n\n");
		md.append(String.format(Locale.ROOT, "%s. Made on %s by:%n%n", title(o), LocalDate.now(ZoneOffset.UTC)));
		md.append("```bash\nsrc/benchmarks/accuracy").append(args.isBlank() ? "" : " " + args).append("\n```\n\n");
		md.append(String.format(Locale.ROOT,
				"Plan: %d tokens per %d ms window (token bucket: capacity %d, refill %d per %d ms), i.e. %s tokens/s. "
						+ "Traffic: %d gateway instances (%s), each with its own Lettuce client and connection, "
						+ "together %s checks/s (%s× the plan), cost 1, evenly paced per instance with random phases "
						+ "(seed %d), against one Redis. Times are Redis times (the script's `TIME`).%n%n",
				o.capacity(), o.window().toMillis(), o.capacity(), o.capacity(), o.window().toMillis(), trim(rate),
				o.instances(), (o.mode() == Mode.PROCESSES) ? "separate JVMs" : "separate clients in one JVM",
				trim(rate * o.overload()), trim(o.overload()), o.seed()));
		md.append("| algorithm | checks sent | admitted | theory: capacity + rate × t | vs theory | target | algorithm's "
				+ "own bound | exact limiter, same arrivals | most admitted in any ").append(o.window().toMillis())
			.append(" ms window | exact limit per window | longest gap between checks | check p50 / p99 |\n");
		md.append("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
		for (AccuracyAnalysis run : runs) {
			Boolean meets = run.meetsTarget();
			boolean leased = run.leases().on();
			String target = switch (run.plan().algorithm()) {
				case TOKEN_BUCKET -> (leased ? "≤ theory, ≥ −2%: " : "±0.5%: ")
						+ (Boolean.TRUE.equals(meets) ? "met" : "MISSED");
				case SLIDING_WINDOW_LOG -> "±0.5%: " + (Boolean.TRUE.equals(meets) ? "met" : "MISSED");
				case SLIDING_WINDOW_COUNTER -> "±2%: " + (Boolean.TRUE.equals(meets) ? "met" : "MISSED");
				case FIXED_WINDOW, CONCURRENCY, QUOTA -> "none";
			};
			md.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,.1f (t = %.3f s) | %+.3f%% | %s | %,d%s | %,d "
					+ "(%+d%s) | %d | %d | %.1f ms | %.2f / %.2f ms |%n", run.label(), run.sent(),
					run.admitted(), run.theory(), run.seconds(), 100 * run.errorVsTheory(), target, run.bound(),
					(run.plan().algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) ? " (≈)" : "", run.reference(),
					run.admitted() - run.reference(), leased ? "; not comparable, see below" : "",
					run.maxInWindow(), run.windowLimit(),
					run.longestGapMicros() / 1000.0, run.latencyP50Micros() / 1000.0,
					run.latencyP99Micros() / 1000.0));
			if (run.errors() > 0) {
				md.append("|  ↳ ").append(run.errors()).append(" checks failed | | | | | | | | | | | |\n");
			}
		}
		md.append("\n![admitted over time per algorithm](accuracy-chart.png)\n\n");
		md.append(NOTES);
		if (runs.stream().anyMatch((r) -> r.plan().algorithm() == Algorithm.TOKEN_BUCKET)) {
			md.append(upperBoundSection(runs));
		}
		return md.toString();
	}

	/**
	 * The token-bucket runs' upper bound and under-admission (issue 14), one row per run.
	 * @param runs the analyses (only token buckets are listed)
	 * @return the Markdown section
	 */
	static String upperBoundSection(List<AccuracyAnalysis> runs) {
		StringBuilder md = new StringBuilder();
		md.append("\n## Upper bound and under-admission (token bucket, leases on and off)\n\n");
		md.append("| run | admitted | of them from a lease | bound: capacity + rate × t | under-admission | target "
				+ "(≤ bound, ≤ 2% below) | below the exact limiter, same arrivals | largest excess over rate × length, any interval (≤ capacity) | most in any "
				+ "W window (≤ capacity + rate × W) | most in any 1 s window (≤ capacity + rate × 1 s) | fewest / most "
				+ "per whole second | Redis script calls | calls per admitted | upper bound |\n");
		md.append("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (AccuracyAnalysis run : runs) {
			if (run.plan().algorithm() != Algorithm.TOKEN_BUCKET) {
				continue;
			}
			UpperBound b = run.upperBound();
			boolean withinBound = run.admitted() <= run.bound() && b.holds();
			String target = (withinBound && run.meetsLeaseTarget()) ? "met" : "MISSED";
			String calls = (run.redisCalls() < 0) ? "n/a" : String.format(Locale.ROOT, "%,d", run.redisCalls());
			String perAdmitted = Double.isNaN(run.callsPerAdmitted()) ? "n/a"
					: String.format(Locale.ROOT, "%.3f", run.callsPerAdmitted());
			md.append(String.format(Locale.ROOT,
					"| %s | %,d | %,d (%.1f%%) | %,d | %.3f%% | %s | %,d (%.3f%%) | %.2f of %d (%d in %.1f ms at %.3f s) | %d of %d "
							+ "| %d of %s | %d / %d (%d s) | %s | %s | %s |%n",
					run.label(), run.admitted(), run.leased(),
					(run.admitted() == 0) ? 0.0 : 100.0 * run.leased() / run.admitted(), run.bound(),
					100 * run.underAdmission(), target, run.reference() - run.admitted(),
					(run.reference() == 0) ? 0.0 : 100.0 * (run.reference() - run.admitted()) / run.reference(),
					b.maxExcess(), b.capacity(), b.excessCount(),
					(b.excessToMicros() - b.excessFromMicros()) / 1e3, b.excessFromMicros() / 1e6,
					run.maxInWindow(), run.windowLimit(), b.maxInSecond(), trim(b.secondLimit()), b.minPerSecond(),
					b.maxPerSecond(), b.wholeSeconds(), calls, perAdmitted,
					withinBound ? "held" : "**EXCEEDED**: " + b.violation()));
		}
		md.append(UPPER_BOUND_NOTES);
		return md.toString();
	}

	private static final String UPPER_BOUND_NOTES = """

			- With leases an instance admits some checks from tokens it took ahead, without asking Redis, so the \
			exact limiter fed the same arrivals no longer describes what should happen (the column above is only \
			for comparison). What must hold, and is checked strictly on every token-bucket run (the run fails if \
			not): over any interval, never more admitted than `capacity + rate × its length`. The **largest excess** \
			is the most admitted between two admissions minus `rate ×` the time between them, over every pair: at \
			most the capacity (the first burst of a full bucket reaches it).
			- A leased admission is timed at the instance's wall clock right after the chain answered it (the clock \
			Redis' `TIME` reads, on one machine), a store's decision at the script's `TIME`.
			- **under-admission** is `(capacity + rate × t − admitted) ÷ (capacity + rate × t)`; leases may cost at \
			most 2% (issue 14). It includes what stalled traffic cost (checks that arrive late are tokens nobody \
			asked for in time; see the longest gap above); **below the exact limiter, same arrivals** is what the \
			run admitted less than one exact limiter fed the same checks at the same times: the leases' own cost \
			(0 without leases).
			- **Redis script calls** are `INFO commandstats` (EVALSHA + EVAL) from the start of the traffic until \
			every instance had stopped (the leases given back at shutdown included; warm-up not).
			""";

	private static final String NOTES = """
			## Reading the table

			- **theory** is the issue's `capacity + rate × t`: the most a limiter of this rate and burst may admit \
			between the run's first and last check (`t` in Redis time).
			- **exact limiter, same arrivals** feeds the run's checks, in Redis order and at their Redis times, to a \
			single-threaded in-memory model of the algorithm (`ReferenceLimiter`). `+0` means that the instances \
			sharing one Redis admitted exactly what one exact limiter admits for that traffic: no lost update, no \
			double admission.
			- Any distance between those two columns comes from the traffic, not the limiter: when instances stall \
			(GC, CPU shared with other work), checks arrive late (see **longest gap between checks**). A token bucket \
			loses nothing for gaps shorter than capacity ÷ rate; a sliding log frees each slot exactly one window \
			after it was used, so a late arrival moves that slot's next window later for the rest of the run, and the \
			log falls behind `capacity + rate × t` by what the stalls cost.
			- **most admitted in any window** is over every half-open window `[a, a + W)` in Redis time. Token \
			bucket: up to `capacity + rate × W` (burst plus refill, by design). Sliding log: never above capacity. \
			Fixed window: up to twice the capacity across a window edge. Sliding counter: a client's first burst \
			lands in one window and is under-weighted in the next (the approximation assumes an even spread), so \
			one window exceeds the capacity at the start; in steady traffic it stays at about the capacity (chart, \
			bottom).
			- The algorithm's own bound is `capacity × (⌊t / W⌋ + 1)` for the log and `capacity` per window touched \
			for the fixed window (≈ for the counter); it differs from theory by at most one window's capacity.
			""";

	/**
	 * A duration as the options take it: {@code 1s}, {@code 1.5s} or {@code 250ms}.
	 * @param duration the duration
	 * @return its text
	 */
	static String formatDuration(Duration duration) {
		long millis = duration.toMillis();
		return (millis % 1000 == 0) ? (millis / 1000) + "s"
				: (millis >= 1000) ? trim(millis / 1000.0) + "s" : millis + "ms";
	}

	private static String trim(double value) {
		return (value == Math.rint(value)) ? Long.toString((long) value) : String.format(Locale.ROOT, "%.2f", value);
	}

	/** How instances run. */
	public enum Mode {

		/** Each instance its own JVM (and Lettuce client). */
		PROCESSES,

		/** Each instance its own Lettuce client, in this JVM. */
		CLIENTS

	}

	/**
	 * What to run.
	 * @param instances N
	 * @param overload k
	 * @param duration how long traffic flows
	 * @param capacity tokens per window
	 * @param window the window (token bucket: refill period)
	 * @param algorithms which algorithms, in order
	 * @param mode processes or clients
	 * @param redis Redis URI, or {@code null} to start one
	 * @param out output directory
	 * @param seed random seed for the phases
	 * @param leaseBudgets lease budgets to run token buckets with, in order, in percent of the capacity (0: off)
	 * @param leaseDuration how long an instance may spend a lease ({@code ratelimit.leases.duration})
	 */
	public record Options(int instances, double overload, Duration duration, long capacity, Duration window,
			List<Algorithm> algorithms, Mode mode, String redis, Path out, long seed, List<Double> leaseBudgets,
			Duration leaseDuration) {

		/**
		 * Without leases.
		 * @param instances N
		 * @param overload k
		 * @param duration how long traffic flows
		 * @param capacity tokens per window
		 * @param window the window
		 * @param algorithms which algorithms
		 * @param mode processes or clients
		 * @param redis Redis URI or {@code null}
		 * @param out output directory
		 * @param seed random seed
		 */
		public Options(int instances, double overload, Duration duration, long capacity, Duration window,
				List<Algorithm> algorithms, Mode mode, String redis, Path out, long seed) {
			this(instances, overload, duration, capacity, window, algorithms, mode, redis, out, seed, List.of(0.0),
					Leases.DEFAULT_DURATION);
		}

		/**
		 * The lease settings a plan runs with: each of {@link #leaseBudgets()} for a token bucket (duplicates once),
		 * none for the window algorithms.
		 * @param plan the plan
		 * @return one or more settings, in order
		 */
		List<Leases> leasesFor(Plan plan) {
			if (plan.algorithm() != Algorithm.TOKEN_BUCKET) {
				return List.of(Leases.OFF);
			}
			return this.leaseBudgets.stream().distinct()
				.map((budget) -> (budget == 0) ? Leases.OFF : new Leases(budget, this.leaseDuration)).toList();
		}

		/**
		 * Whether any run uses leases.
		 * @return a token bucket with a budget above 0 is among the runs
		 */
		boolean anyLeases() {
			return this.algorithms.contains(Algorithm.TOKEN_BUCKET) && this.leaseBudgets.stream().anyMatch((b) -> b > 0);
		}

		static Options parse(String[] args) {
			int instances = 20;
			double overload = 5;
			Duration duration = Duration.ofSeconds(60);
			long capacity = 50;
			Duration window = Duration.ofMillis(100);
			List<Algorithm> algorithms = java.util.Arrays.stream(Algorithm.values())
				.filter((algorithm) -> !algorithm.isConcurrency() && algorithm != Algorithm.QUOTA)
				.toList();
			Mode mode = Mode.PROCESSES;
			String redis = null;
			Path out = Path.of("src/docs/reports");
			long seed = 4;
			List<Double> leaseBudgets = List.of(0.0);
			Duration leaseDuration = Leases.DEFAULT_DURATION;
			for (int i = 0; i < args.length; i += 2) {
				if (i + 1 >= args.length) {
					throw new IllegalArgumentException("option " + args[i] + " takes a value");
				}
				String value = args[i + 1];
				switch (args[i]) {
					case "--instances" -> instances = Integer.parseInt(value);
					case "--overload" -> overload = Double.parseDouble(value);
					case "--duration" -> duration = parseDuration(value);
					case "--capacity" -> capacity = Long.parseLong(value);
					case "--window" -> window = parseDuration(value);
					case "--algorithms" -> algorithms = Arrays.stream(value.split(","))
						.map(Plan::parseAlgorithm).toList();
					case "--mode" -> mode = Mode.valueOf(value.toUpperCase(Locale.ROOT));
					case "--redis" -> redis = value;
					case "--out" -> out = Path.of(value);
					case "--seed" -> seed = Long.parseLong(value);
					case "--lease" -> leaseBudgets = Arrays.stream(value.split(",")).map(Leases::parseBudget).toList();
					case "--lease-duration" -> leaseDuration = parseDuration(value);
					default -> throw new IllegalArgumentException("unknown option " + args[i]);
				}
			}
			if (leaseDuration.isZero() || leaseDuration.isNegative() || leaseDuration.compareTo(Duration.ofSeconds(10)) > 0) {
				throw new IllegalArgumentException("--lease-duration is above 0 and at most 10s (as "
						+ "ratelimit.leases.duration), was " + formatDuration(leaseDuration));
			}
			return new Options(instances, overload, duration, capacity, window, algorithms, mode, redis, out, seed,
					leaseBudgets, leaseDuration);
		}

		private static Duration parseDuration(String value) {
			String v = value.trim().toLowerCase(Locale.ROOT);
			if (v.endsWith("ms")) {
				return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
			}
			if (v.endsWith("s")) {
				return Duration.ofMillis((long) (Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
			}
			if (v.endsWith("m")) {
				return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
			}
			return Duration.ofMillis(Long.parseLong(v));
		}

	}

}
