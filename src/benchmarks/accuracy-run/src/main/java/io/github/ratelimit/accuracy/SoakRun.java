package io.github.ratelimit.accuracy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.accuracy.SoakSampler.GatewayProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The soak of issue 15 (hours of load; a harness, not a CI test): clients that come and go, each at twice its plan's
 * rate, spread over two running sample gateways that share one Redis, for 30 minutes; meanwhile the gateways' heap
 * after GC, threads and file descriptors and Redis' key count are sampled, and every answer is recorded. It prints the
 * verdicts (heap after GC flat, keys bounded by the TTLs, threads and fds flat, zero 5xx, admitted within the accuracy
 * report's bound every client-minute; see {@link SoakAnalysis}), writes a Markdown report and a chart, and exits with
 * status 1 if a verdict fails.
 *
 * <p>Started by {@code src/benchmarks/soak}, which builds, starts Redis and the gateways on free ports, passes them
 * here ({@code --redis-port}, {@code --gateway name,apiPort,managementPort,pid} per instance) and stops everything on
 * exit. Options: {@code --minutes} (30), {@code --clients} active at once (60), {@code --overload} (2),
 * {@code --min-lifetime} (1m) and {@code --max-lifetime} (5m) of a client, {@code --sample-every} (10s),
 * {@code --gc-every} (30s), {@code --drain} (65s: the wait after the load before the last key count), {@code --out DIR}
 * (samples, class histograms), {@code --report FILE} (the chart goes beside it), {@code --seed}; the plan of the route
 * ({@code --path} /public/soak, limited by client IP): {@code --capacity} (60), {@code --refill-tokens} (60),
 * {@code --refill-period} (60s), {@code --keys-per-client} (1), as the sample's {@code anonymous} plan; the verdicts'
 * limits: {@code --heap-slope} (MB/h, 5), {@code --thread-range} (10), {@code --fd-range} (32), {@code --key-slack}
 * (2s), {@code --request-timeout} (120s); {@code --reanalyze DIR} analyses a finished run's raw samples again (with
 * the same options as the run) and writes its report, without load.
 */
public final class SoakRun {

	private static final Logger logger = LoggerFactory.getLogger(SoakRun.class);

	private SoakRun() {
	}

	/**
	 * Run from the command line.
	 * @param args see the class description
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		Files.createDirectories(options.out());
		SoakAnalysis analysis = (options.reanalyze() != null) ? SoakReport.readRun(options) : run(options);
		List<SoakAnalysis.Verdict> verdicts = analysis.verdicts();
		Path report = options.report();
		Path chart = chartPath(report);
		if (report.getParent() != null) {
			Files.createDirectories(report.getParent());
		}
		SoakChart.write(analysis, chart);
		Files.writeString(report, SoakReport.markdown(analysis, verdicts, chart.getFileName().toString(),
				(options.facts() != null && Files.exists(options.facts())) ? Files.readAllLines(options.facts())
						: List.of()));
		boolean ok = true;
		System.out.println();
		for (SoakAnalysis.Verdict verdict : verdicts) {
			System.out.printf(Locale.ROOT, "%-5s %s: %s%n", verdict.holds() ? "OK" : "FAIL", verdict.name(),
					verdict.figure());
			ok &= verdict.holds();
		}
		System.out.println("Report: " + report + ", chart: " + chart + ", samples: " + options.out());
		System.exit(ok ? 0 : 1);
	}

	/** {@code soak-report.md} -> {@code soak-chart.png}; any other {@code x.md} -> {@code x.png}. */
	static Path chartPath(Path report) {
		String name = report.getFileName().toString();
		String chart = name.endsWith("-report.md") ? name.substring(0, name.length() - "-report.md".length()) + "-chart.png"
				: name.replaceFirst("(\\.md)?$", ".png");
		return report.resolveSibling(chart);
	}

	static SoakAnalysis run(Options options) throws Exception {
		List<URI> apis = options.gateways().stream().map(GatewayProcess::apiUri).toList();
		try (RedisAdmin redis = new RedisAdmin("redis://127.0.0.1:" + options.redisPort())) {
			warmUp(apis, redis);
			long fixedKeys = redis.longCommand("DBSIZE");
			logger.info("Fixed keys before the first client: {}", fixedKeys);
			SoakSampler sampler = new SoakSampler(options.gateways(), redis);
			long intervalMicros = (long) (options.refillPeriod().toNanos() / 1000.0 / options.refillTokens()
					/ options.overload());
			SoakLoad load = new SoakLoad(apis, options.path(), options.clients(), intervalMicros,
					options.minLifetime(), options.maxLifetime(), options.seed(), options.requestTimeout());
			long start = GatewayInstance.nowMicros() + 1_000_000;
			long end = start + options.minutes() * 60_000_000L;
			ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor((r) -> {
				Thread thread = new Thread(r, "soak-sampler");
				thread.setDaemon(true);
				return thread;
			});
			long sampleEvery = options.sampleEvery().toMillis();
			long gcEveryTicks = Math.max(1, options.gcEvery().toMillis() / sampleEvery);
			long steadyFrom = (end - start) / 3;
			boolean[] histogramTaken = { false };
			List<List<Map<String, Long>>> histograms = new ArrayList<>();
			long[] tick = { 0 };
			schedule.scheduleAtFixedRate(() -> {
				try {
					SoakSampler.Sample s = sampler.sample();
					if (tick[0] % gcEveryTicks == 0) {
						sampler.gcSample();
					}
					if (!histogramTaken[0] && GatewayInstance.nowMicros() - start >= steadyFrom) {
						histogramTaken[0] = true;
						histograms.add(sampler.classHistograms(options.out(), "steady"));
					}
					tick[0]++;
					logger.info(String.format(Locale.ROOT,
							"minute %5.2f: %d clients, DBSIZE %d, threads %s, fds %s, load %.2f",
							(s.beforeMicros() - start) / 6e7, Math.max(0, loadActive(load, s.beforeMicros())),
							s.dbsize(), s.gateways().stream().map((g) -> Integer.toString(g.threads())).toList(),
							s.gateways().stream().map((g) -> Integer.toString(g.fds())).toList(), s.load1()));
				}
				catch (RuntimeException ex) {
					logger.warn("sample failed: {}", ex.toString());
				}
			}, Math.max(0, (start - GatewayInstance.nowMicros()) / 1000), sampleEvery, TimeUnit.MILLISECONDS);
			Thread stopper = new Thread(load::stop);
			Runtime.getRuntime().addShutdownHook(stopper);
			logger.info("Soak: {} clients at {}x the plan, {} min, over {}", options.clients(), options.overload(),
					options.minutes(), apis);
			load.run(start, end);
			long stoppedAt = GatewayInstance.nowMicros();
			schedule.shutdown();
			schedule.awaitTermination(2, TimeUnit.MINUTES);
			sampler.sample();
			sampler.gcSample();
			histograms.add(sampler.classHistograms(options.out(), "end"));
			long drainUntil = stoppedAt + options.drain().toNanos() / 1000;
			logger.info("Load stopped; waiting {} s for the buckets' keys to expire", options.drain().toSeconds());
			while (GatewayInstance.nowMicros() < drainUntil) {
				Thread.sleep(Math.min(10_000, Math.max(1, (drainUntil - GatewayInstance.nowMicros()) / 1000)));
			}
			long drained = redis.longCommand("DBSIZE");
			String evalsha;
			try {
				evalsha = redis.info("commandstats", "cmdstat_evalsha");
			}
			catch (IllegalStateException ex) {
				evalsha = "none";
			}
			Files.writeString(options.out().resolve(SoakReport.STALLS), SoakReport.stalls(evalsha, options));
			load.close();
			SoakAnalysis analysis = new SoakAnalysis(options, start, end, load.clients(), sampler.samples(),
					sampler.gcSamples(), fixedKeys, drained);
			SoakReport.writeSamples(analysis, options.out());
			Files.writeString(options.out().resolve(SoakReport.RUN),
					"start_us=" + start + "\nend_us=" + end + "\nfixed_keys=" + fixedKeys + "\ndrained_keys=" + drained + "\ncommand=" + options.command() + "\n");
			if (histograms.size() == 2) {
				SoakReport.writeHistogramGrowth(histograms.get(0), histograms.get(1), options);
			}
			return analysis;
		}
	}

	private static int loadActive(SoakLoad load, long micros) {
		int active = 0;
		for (SoakClient client : load.clients()) {
			if (client.firstDueMicros() <= micros && client.stopMicros() > micros) {
				active++;
			}
		}
		return active;
	}

	/**
	 * Let each gateway's JIT compile the request path before the run (a cold gateway's first checks can outlast the
	 * Redis timeout and fall back): 1,000 requests per gateway from a documentation address (192.0.2.0/24), 8 in
	 * flight; then that client's keys are deleted, so that only the fixed keys are left.
	 */
	private static void warmUp(List<URI> apis, RedisAdmin redis) throws Exception {
		HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		for (URI api : apis) {
			for (int batch = 0; batch < 125; batch++) {
				List<CompletableFuture<HttpResponse<Void>>> inFlight = new ArrayList<>();
				for (int i = 0; i < 8; i++) {
					inFlight.add(http.sendAsync(HttpRequest.newBuilder(api.resolve("/public/warm-up"))
						.header("X-Forwarded-For", "192.0.2." + (1 + i))
						.timeout(Duration.ofSeconds(10))
						.build(), HttpResponse.BodyHandlers.discarding()));
				}
				CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
			}
		}
		Object keys = redis.command("KEYS", "*192.0.2.*");
		if (keys instanceof List<?> list && !list.isEmpty()) {
			redis.command("DEL", list.stream().map(String::valueOf).toArray(String[]::new));
		}
		logger.info("Warmed up {} gateways (1,000 requests each)", apis.size());
	}

	/**
	 * The soak's options.
	 * @param minutes length of the load
	 * @param clients clients active at once
	 * @param overload each client's rate as a multiple of its plan's refill rate
	 * @param minLifetime shortest life of a client
	 * @param maxLifetime longest life of a client
	 * @param path the path the clients request
	 * @param capacity the plan's capacity, tokens
	 * @param refillTokens tokens refilled per period
	 * @param refillPeriod the refill period
	 * @param keysPerClient Redis keys one client's requests write
	 * @param sampleEvery time between samples
	 * @param gcEvery time between heap-after-GC samples
	 * @param drain wait after the load before the last key count
	 * @param redisPort the Redis the gateways share, on 127.0.0.1
	 * @param gateways the running gateways
	 * @param out where samples and histograms go
	 * @param report the report's path
	 * @param facts a file of machine facts (one per line) for the report, or null
	 * @param command the command line for the report
	 * @param seed seed of lifetimes and phases
	 * @param heapSlopeMbPerHour limit of the heap-after-GC slope, MB per hour
	 * @param threadRange limit of max - min threads
	 * @param fdRange limit of max - min file descriptors
	 * @param keySlack allowance for Redis' expiry cycle and sampling beyond a key's TTL
	 * @param requestTimeout longest wait for an answer
	 * @param reanalyze a finished run's output directory to analyse again (no load), or null
	 */
	record Options(int minutes, int clients, double overload, Duration minLifetime, Duration maxLifetime, String path,
			long capacity, long refillTokens, Duration refillPeriod, int keysPerClient, Duration sampleEvery,
			Duration gcEvery, Duration drain, int redisPort, List<GatewayProcess> gateways, Path out, Path report,
			Path facts, String command, long seed, double heapSlopeMbPerHour, int threadRange, int fdRange,
			Duration keySlack, Duration requestTimeout, Path reanalyze) {

		static Options parse(String[] args) {
			int minutes = 30;
			int clients = 60;
			double overload = 2;
			Duration minLifetime = Duration.ofMinutes(1);
			Duration maxLifetime = Duration.ofMinutes(5);
			String path = "/public/soak";
			long capacity = 60;
			long refillTokens = 60;
			Duration refillPeriod = Duration.ofSeconds(60);
			int keysPerClient = 1;
			Duration sampleEvery = Duration.ofSeconds(10);
			Duration gcEvery = Duration.ofSeconds(30);
			Duration drain = Duration.ofSeconds(65);
			int redisPort = 6379;
			List<GatewayProcess> gateways = new ArrayList<>();
			Path out = Path.of("target/soak");
			Path report = Path.of("src/docs/reports/soak-report.md");
			Path facts = null;
			String command = "src/benchmarks/soak";
			long seed = 15;
			double heapSlope = 5;
			int threadRange = 10;
			int fdRange = 32;
			Duration keySlack = Duration.ofSeconds(2);
			Duration requestTimeout = Duration.ofSeconds(120);
			Path reanalyze = null;
			for (int i = 0; i < args.length; i += 2) {
				if (i + 1 >= args.length) {
					throw new IllegalArgumentException("option " + args[i] + " takes a value");
				}
				String v = args[i + 1];
				switch (args[i]) {
					case "--minutes" -> minutes = Integer.parseInt(v);
					case "--clients" -> clients = Integer.parseInt(v);
					case "--overload" -> overload = Double.parseDouble(v);
					case "--min-lifetime" -> minLifetime = duration(v);
					case "--max-lifetime" -> maxLifetime = duration(v);
					case "--path" -> path = v;
					case "--capacity" -> capacity = Long.parseLong(v);
					case "--refill-tokens" -> refillTokens = Long.parseLong(v);
					case "--refill-period" -> refillPeriod = duration(v);
					case "--keys-per-client" -> keysPerClient = Integer.parseInt(v);
					case "--sample-every" -> sampleEvery = duration(v);
					case "--gc-every" -> gcEvery = duration(v);
					case "--drain" -> drain = duration(v);
					case "--redis-port" -> redisPort = Integer.parseInt(v);
					case "--gateway" -> gateways.add(GatewayProcess.parse(v));
					case "--out" -> out = Path.of(v);
					case "--report" -> report = Path.of(v);
					case "--facts" -> facts = Path.of(v);
					case "--command" -> command = v;
					case "--seed" -> seed = Long.parseLong(v);
					case "--heap-slope" -> heapSlope = Double.parseDouble(v);
					case "--thread-range" -> threadRange = Integer.parseInt(v);
					case "--fd-range" -> fdRange = Integer.parseInt(v);
					case "--key-slack" -> keySlack = duration(v);
					case "--request-timeout" -> requestTimeout = duration(v);
					case "--reanalyze" -> reanalyze = Path.of(v);
					default -> throw new IllegalArgumentException("unknown option " + args[i]);
				}
			}
			if (gateways.isEmpty() || gateways.size() > 4) {
				throw new IllegalArgumentException("give one to four --gateway name,apiPort,managementPort,pid");
			}
			return new Options(minutes, clients, overload, minLifetime, maxLifetime, path, capacity, refillTokens,
					refillPeriod, keysPerClient, sampleEvery, gcEvery, drain, redisPort, List.copyOf(gateways), out,
					report, facts, command, seed, heapSlope, threadRange, fdRange, keySlack, requestTimeout, reanalyze);
		}

		/** {@code 90s}, {@code 5m}, {@code 500ms} or an ISO-8601 duration. */
		static Duration duration(String value) {
			String v = value.trim().toLowerCase(Locale.ROOT);
			if (v.endsWith("ms")) {
				return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
			}
			if (v.endsWith("s")) {
				return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
			}
			if (v.endsWith("m")) {
				return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
			}
			return Duration.parse(value);
		}

	}

	/** UTC time of a wall-clock instant in µs, for the report. */
	static String utc(long micros) {
		return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")
			.withZone(ZoneOffset.UTC)
			.format(Instant.ofEpochSecond(micros / 1_000_000));
	}

}
