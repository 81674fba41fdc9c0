package io.github.ratelimit.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * The open-loop driver of the protection benchmark (issue 41). Per run (a route set of {@link ProtectionGateway}),
 * the same traffic: Poisson arrivals from one seed at 1×, 2× and 4× the model upstream's capacity, then 0.5×, in a
 * mix of classes ({@code critical} on the login route, {@code high} with the API keys of plan {@code gold},
 * {@code low} with those of plan {@code free}). A request is sent at its arrival time whatever happened to the
 * earlier ones (a request the sender could not send on time is sent late and counted late, never skipped); its client
 * waits at most the timeout from that arrival time, then gives up and closes its connection, and the upstream is told
 * that deadline ({@value ModelUpstream#DEADLINE_HEADER}). Before each run the upstream's queue is drained (the driver
 * waits until it is idle); after it, the upstream's counters are read. Writes {@code phases.tsv},
 * {@code requests.tsv} (one row per request) and {@code upstream-stats.tsv} into the output directory.
 * {@code BenchmarkMain protection-drive --gateway-port P --upstream-port U --out DIR [--runs none,fixed,...]
 * [--quick]}.
 */
final class ProtectionDriver {

	private static final Logger logger = LoggerFactory.getLogger(ProtectionDriver.class);

	/** A load phase: a multiple of the upstream's capacity for some seconds. */
	record Phase(String name, double multiple, double seconds) {
	}

	/** The traffic classes, their path under a run's route set, their share of the arrivals. */
	enum TrafficClass {

		CRITICAL("/login/x", 0.15), HIGH("/api/x", 0.35), LOW("/api/x", 0.50);

		final String path;

		final double share;

		TrafficClass(String path, double share) {
			this.path = path;
			this.share = share;
		}

		String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	/** What became of a request. */
	enum Outcome {

		/** A 2xx within the timeout. */
		OK,
		/** 503 with the starter's overloaded problem body. */
		SHED,
		/** 429: a rate limit refused (must not happen here). */
		LIMITED,
		/** No answer within the timeout. */
		TIMEOUT,
		/** Another status. */
		OTHER,
		/** The connection failed. */
		ERROR

	}

	static final List<String> REQUEST_HEADER = List.of("run", "phase", "class", "intended_ms", "send_lag_ms",
			"outcome", "status", "latency_ms", "completed_ms");

	static final List<String> PHASE_HEADER = List.of("run", "phase", "multiple", "rate_per_s", "start_epoch_ms",
			"end_epoch_ms", "requests");

	/** A sender later than this behind an arrival counts the request as late (it is still sent, and timed from its arrival). */
	static final long LATE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final HttpClient gateway;

	private final HttpClient upstream;

	private final double capacity;

	private final long timeoutNanos;

	private final long seed;

	private final Path out;

	ProtectionDriver(HttpClient gateway, HttpClient upstream, double capacity, Duration timeout, long seed, Path out) {
		this.gateway = gateway;
		this.upstream = upstream;
		this.capacity = capacity;
		this.timeoutNanos = timeout.toNanos();
		this.seed = seed;
		this.out = out;
	}

	/**
	 * Drive every run (see the class comment).
	 * @param options {@code gateway-port}, {@code upstream-port}, {@code out}; optional {@code runs}
	 * (comma-separated, default every run of {@link ProtectionGateway#RUNS}), {@code capacity} (320),
	 * {@code timeout-ms} (1000), {@code seed}, {@code quick}, {@code max-drain-s} (300)
	 * @throws Exception if a file cannot be written, or the upstream does not drain
	 */
	static void run(Map<String, String> options) throws Exception {
		boolean quick = options.containsKey("quick");
		Path out = Path.of(options.get("out"));
		Files.createDirectories(out);
		List<String> runs = List.of(options.getOrDefault("runs", String.join(",", ProtectionGateway.RUNS)).split(","));
		double capacity = Double.parseDouble(options.getOrDefault("capacity", "320"));
		long maxDrainSeconds = Long.parseLong(options.getOrDefault("max-drain-s", "300"));
		List<Phase> phases = phases(quick);
		ConnectionProvider pool = ConnectionProvider.builder("driver")
			.maxConnections(8000)
			.pendingAcquireMaxCount(-1)
			.pendingAcquireTimeout(Duration.ofSeconds(10))
			.maxIdleTime(Duration.ofSeconds(30))
			.build();
		LoopResources loops = LoopResources.create("driver", 2, true);
		try {
			HttpClient gateway = HttpClient.create(pool)
				.runOn(loops)
				.baseUrl("http://127.0.0.1:" + options.get("gateway-port"));
			HttpClient upstream = HttpClient.create()
				.runOn(loops)
				.baseUrl("http://127.0.0.1:" + options.get("upstream-port"));
			ProtectionDriver driver = new ProtectionDriver(gateway, upstream, capacity,
					Duration.ofMillis(Long.parseLong(options.getOrDefault("timeout-ms", "1000"))),
					Long.parseLong(options.getOrDefault("seed", "41")), out);
			// warm-up (not reported): the unprotected and the fixed route sets alternately, below capacity
			double warmUpSeconds = quick ? 4 : 20;
			logger.info("Warm-up: {} s at 0.8x on the route sets none and fixed", warmUpSeconds);
			driver.drive("warmup", List.of(new Phase("warmup", 0.8, warmUpSeconds)), List.of("none", "fixed"),
					false);
			driver.drain(maxDrainSeconds, "warmup");
			for (String run : runs) {
				driver.drain(maxDrainSeconds, "before " + run);
				driver.drive(run, phases, List.of(run), true);
				long drained = driver.drain(maxDrainSeconds, "after " + run);
				Tsv.append(out.resolve("drain.tsv"), List.of("run", "drain_ms"), List.of(run, drained));
				driver.saveUpstreamStats(run);
			}
		}
		finally {
			pool.disposeLater().block(Duration.ofSeconds(5));
			loops.disposeLater().block(Duration.ofSeconds(5));
		}
	}

	/** 1×, 2×, 4×, then 0.5× of the capacity. */
	static List<Phase> phases(boolean quick) {
		return quick
				? List.of(new Phase("1x", 1, 3), new Phase("2x", 2, 5), new Phase("4x", 4, 3),
						new Phase("0.5x", 0.5, 7))
				: List.of(new Phase("1x", 1, 15), new Phase("2x", 2, 25), new Phase("4x", 4, 15),
						new Phase("0.5x", 0.5, 20));
	}

	/**
	 * One run: the arrivals of the phases (the same for every run: one seed), sent open loop, each waited for.
	 * @param run the run's name (its tag)
	 * @param phases the phases, back to back
	 * @param routeSets the route sets the requests go to, in turn
	 * @param record whether to write the requests and phases
	 */
	void drive(String run, List<Phase> phases, List<String> routeSets, boolean record) throws Exception {
		Random random = new Random(this.seed);
		List<Long> intended = new ArrayList<>();
		List<Integer> phaseOf = new ArrayList<>();
		List<TrafficClass> classOf = new ArrayList<>();
		double[] phaseStart = new double[phases.size() + 1];
		double t = 0;
		for (int p = 0; p < phases.size(); p++) {
			Phase phase = phases.get(p);
			double rate = phase.multiple() * this.capacity;
			phaseStart[p] = t;
			double end = t + phase.seconds();
			while (true) {
				t += -Math.log(1 - random.nextDouble()) / rate;
				if (t >= end) {
					t = end;
					break;
				}
				intended.add((long) (t * 1e9));
				phaseOf.add(p);
				double u = random.nextDouble();
				classOf.add(u < TrafficClass.CRITICAL.share ? TrafficClass.CRITICAL
						: u < TrafficClass.CRITICAL.share + TrafficClass.HIGH.share ? TrafficClass.HIGH
								: TrafficClass.LOW);
			}
		}
		phaseStart[phases.size()] = t;
		int n = intended.size();
		long[] lag = new long[n];
		long[] latency = new long[n];
		long[] completed = new long[n];
		int[] status = new int[n];
		Outcome[] outcome = new Outcome[n];
		CountDownLatch answered = new CountDownLatch(n);
		long startEpochMs = System.currentTimeMillis() + 20;
		long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
		int late = 0;
		for (int i = 0; i < n; i++) {
			long due = start + intended.get(i);
			long now;
			while ((now = System.nanoTime()) < due) {
				LockSupport.parkNanos(due - now);
			}
			lag[i] = now - due;
			if (lag[i] > LATE_NANOS) {
				late++;
			}
			TrafficClass trafficClass = classOf.get(i);
			String routeSet = routeSets.get(i % routeSets.size());
			long deadlineEpochMs = startEpochMs + (intended.get(i) + this.timeoutNanos) / 1_000_000;
			String tag = run + "/" + phases.get(phaseOf.get(i)).name() + "/" + trafficClass.tag();
			int index = i;
			send(routeSet, trafficClass, i, deadlineEpochMs, tag, due + this.timeoutNanos - now)
				.subscribe((answer) -> {
					long done = System.nanoTime();
					status[index] = answer.status();
					outcome[index] = classify(answer);
					latency[index] = done - due;
					completed[index] = done - start;
					answered.countDown();
				}, (error) -> {
					long done = System.nanoTime();
					outcome[index] = (error instanceof TimeoutException) ? Outcome.TIMEOUT : Outcome.ERROR;
					latency[index] = done - due;
					completed[index] = done - start;
					answered.countDown();
				});
		}
		if (!answered.await(this.timeoutNanos + TimeUnit.SECONDS.toNanos(30), TimeUnit.NANOSECONDS)) {
			throw new IllegalStateException(run + ": " + answered.getCount() + " requests neither answered nor timed out");
		}
		logger.info("{}: {} requests in {} s, {} sent more than 10 ms late", run, n, String.format(Locale.ROOT, "%.1f", t),
				late);
		if (!record) {
			return;
		}
		for (int p = 0; p < phases.size(); p++) {
			Phase phase = phases.get(p);
			int count = 0;
			int ok = 0;
			int shed = 0;
			for (int i = 0; i < n; i++) {
				if (phaseOf.get(i) == p) {
					count++;
					ok += (outcome[i] == Outcome.OK) ? 1 : 0;
					shed += (outcome[i] == Outcome.SHED) ? 1 : 0;
				}
			}
			Tsv.append(this.out.resolve("phases.tsv"), PHASE_HEADER,
					List.of(run, phase.name(), phase.multiple(), BenchmarkMain.fmt(phase.multiple() * this.capacity),
							startEpochMs + (long) (phaseStart[p] * 1000), startEpochMs + (long) (phaseStart[p + 1] * 1000),
							count));
			logger.info("{} {}: {} requests, {} answered in time ({} %), {} shed", run, phase.name(), count, ok,
					BenchmarkMain.fmt(100.0 * ok / Math.max(1, count)), shed);
		}
		Path file = this.out.resolve("requests.tsv");
		boolean header = !Files.exists(file);
		try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
				StandardOpenOption.APPEND)) {
			if (header) {
				w.write(String.join("\t", REQUEST_HEADER) + "\n");
			}
			for (int i = 0; i < n; i++) {
				w.write(String.format(Locale.ROOT, "%s\t%s\t%s\t%.3f\t%.3f\t%s\t%d\t%.3f\t%.3f%n", run,
						phases.get(phaseOf.get(i)).name(), classOf.get(i).tag(), intended.get(i) / 1e6, lag[i] / 1e6,
						outcome[i].name().toLowerCase(Locale.ROOT), status[i], latency[i] / 1e6, completed[i] / 1e6));
			}
		}
	}

	/** A request answered: status and body. */
	record Answer(int status, String body) {
	}

	private Mono<Answer> send(String routeSet, TrafficClass trafficClass, int i, long deadlineEpochMs, String tag,
			long remainingNanos) {
		String apiKey = switch (trafficClass) {
			case CRITICAL -> null;
			case HIGH -> "gold-" + (i % ProtectionGateway.KEYS_PER_PLAN);
			case LOW -> "free-" + (i % ProtectionGateway.KEYS_PER_PLAN);
		};
		return this.gateway.headers((headers) -> {
			headers.set(ModelUpstream.DEADLINE_HEADER, Long.toString(deadlineEpochMs));
			headers.set(ModelUpstream.TAG_HEADER, tag);
			if (apiKey != null) {
				headers.set(BenchGateway.API_KEY_HEADER, apiKey);
			}
		})
			.get()
			.uri("/" + routeSet + trafficClass.path)
			.responseSingle((response, body) -> body.asString()
				.defaultIfEmpty("")
				.map((text) -> new Answer(response.status().code(), text)))
			.timeout(Duration.ofNanos(Math.max(1, remainingNanos)));
	}

	static Outcome classify(Answer answer) {
		int status = answer.status();
		if (status >= 200 && status < 300) {
			return Outcome.OK;
		}
		if (status == 503 && answer.body().contains("overloaded")) {
			return Outcome.SHED;
		}
		return (status == 429) ? Outcome.LIMITED : Outcome.OTHER;
	}

	/**
	 * Wait until the upstream has nothing queued and nothing in service.
	 * @return how long that took, ms
	 */
	long drain(long maxSeconds, String when) {
		long start = System.nanoTime();
		String[] head = stats().lines().findFirst().orElse("queued\t-1\tbusy\t-1").split("\t");
		String was = "queued " + head[1] + ", busy " + head[3];
		String idle = this.upstream.get().uri("/idle").responseContent().aggregate().asString()
			.timeout(Duration.ofSeconds(maxSeconds), Mono.empty()).block();
		if (idle == null) {
			throw new IllegalStateException("the upstream is not idle " + maxSeconds + " s " + when + " (was: " + was
					+ "; now: " + stats().lines().findFirst().orElse("") + ")");
		}
		long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		logger.info("upstream idle {} after {} ms (was: {})", when, ms, was);
		return ms;
	}

	private String stats() {
		return this.upstream.get().uri("/stats").responseContent().aggregate().asString().block(Duration.ofSeconds(10));
	}

	/** The upstream's counters of a run's tags, appended to {@code upstream-stats.tsv}. */
	void saveUpstreamStats(String run) throws IOException {
		for (String line : stats().lines().skip(1).toList()) {
			String[] cells = line.split("\t");
			String[] tag = cells[0].split("/");
			if (tag.length == 3 && tag[0].equals(run)) {
				Tsv.append(this.out.resolve("upstream-stats.tsv"),
						List.of("run", "phase", "class", "done", "wasted", "service_ns"),
						List.of(tag[0], tag[1], tag[2], cells[1], cells[2], cells[3]));
			}
		}
	}

}
