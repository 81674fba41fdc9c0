package io.github.ratelimit.accuracy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the gateway processes and Redis while the soak runs: every {@code sampleEvery}, each gateway's live threads
 * ({@code /proc/<pid>/task}), open file descriptors ({@code /proc/<pid>/fd}), CPU time ({@code /proc/<pid>/stat}),
 * heap in use and the starter's check and Redis error counters (its {@code /actuator/prometheus}), and Redis'
 * {@code DBSIZE} and {@code used_memory}; every {@code gcEvery}, each gateway's heap after a full GC: {@code jcmd <pid>
 * GC.run} (a synchronous full collection), then {@code jvm.gc.live.data.size}, the old generation after that collection
 * in bytes, taken only if the actuator counted one more major collection than before.
 */
final class SoakSampler {

	private static final Logger logger = LoggerFactory.getLogger(SoakSampler.class);

	private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+)");

	private static final Pattern SOURCE = Pattern.compile("source=\"([^\"]*)\"");

	private final List<GatewayProcess> gateways;

	private final RedisAdmin redis;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final List<Sample> samples = Collections.synchronizedList(new ArrayList<>());

	private final List<GcSample> gcSamples = Collections.synchronizedList(new ArrayList<>());

	/**
	 * A sampler.
	 * @param gateways the gateway processes
	 * @param redis the Redis they share
	 */
	SoakSampler(List<GatewayProcess> gateways, RedisAdmin redis) {
		this.gateways = List.copyOf(gateways);
		this.redis = redis;
	}

	List<Sample> samples() {
		synchronized (this.samples) {
			return new ArrayList<>(this.samples);
		}
	}

	List<GcSample> gcSamples() {
		synchronized (this.gcSamples) {
			return new ArrayList<>(this.gcSamples);
		}
	}

	/**
	 * One sample of every gateway and of Redis, kept.
	 * @return the sample
	 */
	Sample sample() {
		long before = GatewayInstance.nowMicros();
		long dbsize = this.redis.longCommand("DBSIZE");
		long usedMemory = Long.parseLong(this.redis.info("memory", "used_memory"));
		long after = GatewayInstance.nowMicros();
		List<GatewaySample> states = new ArrayList<>();
		for (GatewayProcess gateway : this.gateways) {
			Map<String, Double> metrics = scrape(gateway);
			Map<String, Double> checks = new TreeMap<>();
			for (Map.Entry<String, Double> e : metrics.entrySet()) {
				if (e.getKey().startsWith("ratelimit_check_duration_seconds_count{")) {
					Matcher m = SOURCE.matcher(e.getKey());
					if (m.find()) {
						checks.merge(m.group(1), e.getValue(), Double::sum);
					}
				}
			}
			states.add(new GatewaySample(count(gateway.procPath("task")), count(gateway.procPath("fd")),
					cpuTicks(gateway), sum(metrics, "jvm_memory_used_bytes{", "area=\"heap\""), checks,
					orZero(sum(metrics, "ratelimit_redis_errors_total", ""))));
		}
		Sample sample = new Sample(before, after, states, dbsize, usedMemory, load1());
		this.samples.add(sample);
		return sample;
	}

	/** Each gateway's heap after a full collection, kept. */
	void gcSample() {
		for (int g = 0; g < this.gateways.size(); g++) {
			GatewayProcess gateway = this.gateways.get(g);
			double majorBefore = orZero(sum(scrape(gateway), "jvm_gc_pause_seconds_count{", "end of major GC"));
			jcmd(gateway, "GC.run", null);
			Map<String, Double> after = scrape(gateway);
			double majorAfter = sum(after, "jvm_gc_pause_seconds_count{", "end of major GC");
			double live = after.getOrDefault("jvm_gc_live_data_size_bytes", Double.NaN);
			if (majorAfter > majorBefore && !Double.isNaN(live)) {
				this.gcSamples.add(new GcSample(GatewayInstance.nowMicros(), g, live));
			}
			else {
				logger.warn("{}: no full collection counted after jcmd GC.run; heap sample skipped", gateway.name());
			}
		}
	}

	/**
	 * Each gateway's class histogram ({@code jcmd <pid> GC.class_histogram}, after a full collection), written to
	 * {@code <dir>/<gateway>-<label>.histogram}.
	 * @param dir where the files go
	 * @param label e.g. {@code start} or {@code end}
	 * @return per gateway, bytes per class
	 */
	List<Map<String, Long>> classHistograms(Path dir, String label) {
		List<Map<String, Long>> result = new ArrayList<>();
		for (GatewayProcess gateway : this.gateways) {
			Path file = dir.resolve(gateway.name() + "-" + label + ".histogram");
			jcmd(gateway, "GC.class_histogram", file);
			result.add(parseHistogram(file));
		}
		return result;
	}

	/** Bytes per class name of a {@code GC.class_histogram} output; empty if the file is missing. */
	static Map<String, Long> parseHistogram(Path file) {
		Map<String, Long> bytes = new LinkedHashMap<>();
		if (!Files.exists(file)) {
			return bytes;
		}
		try (Stream<String> lines = Files.lines(file)) {
			lines.map(String::trim).filter((l) -> l.matches("^\\d+:.*")).forEach((l) -> {
				String[] f = l.split("\\s+");
				if (f.length >= 4) {
					bytes.merge(f[3], Long.parseLong(f[2]), Long::sum);
				}
			});
		}
		catch (IOException ex) {
			logger.warn("cannot read {}: {}", file, ex.toString());
		}
		return bytes;
	}

	private void jcmd(GatewayProcess gateway, String command, Path output) {
		try {
			ProcessBuilder builder = new ProcessBuilder("jcmd", Long.toString(gateway.pid()), command);
			if (output != null) {
				builder.redirectOutput(output.toFile());
			}
			else {
				builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
			}
			Process process = builder.redirectError(ProcessBuilder.Redirect.DISCARD).start();
			if (!process.waitFor(60, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				logger.warn("{}: jcmd {} took over 60 s", gateway.name(), command);
			}
		}
		catch (IOException ex) {
			logger.warn("{}: jcmd {} failed: {}", gateway.name(), command, ex.toString());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** The gateway's Prometheus meters, sample name with labels to value; empty if it did not answer. */
	private Map<String, Double> scrape(GatewayProcess gateway) {
		Map<String, Double> values = new LinkedHashMap<>();
		try {
			HttpResponse<String> response = this.http.send(
					HttpRequest.newBuilder(gateway.managementUri().resolve("/actuator/prometheus"))
						.timeout(Duration.ofSeconds(10))
						.build(),
					HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
			for (String line : response.body().split("\n")) {
				if (line.startsWith("#")) {
					continue;
				}
				Matcher m = LINE.matcher(line);
				if (m.find()) {
					try {
						values.put(m.group(1) + ((m.group(2) != null) ? m.group(2) : ""), Double.parseDouble(m.group(4)));
					}
					catch (NumberFormatException ex) {
						// NaN written as "NaN" parses; anything else is skipped
					}
				}
			}
		}
		catch (IOException ex) {
			logger.warn("{}: actuator did not answer: {}", gateway.name(), ex.toString());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return values;
	}

	private static double sum(Map<String, Double> metrics, String prefix, String containing) {
		double sum = 0;
		boolean found = false;
		for (Map.Entry<String, Double> e : metrics.entrySet()) {
			if (e.getKey().startsWith(prefix) && e.getKey().contains(containing)) {
				sum += e.getValue();
				found = true;
			}
		}
		return found ? sum : Double.NaN;
	}

	private static double orZero(double value) {
		return Double.isNaN(value) ? 0 : value;
	}

	private static int count(Path dir) {
		try (Stream<Path> entries = Files.list(dir)) {
			return (int) entries.count();
		}
		catch (IOException ex) {
			return -1;
		}
	}

	/** utime + stime of the process, clock ticks (100 per second on Linux). */
	private static long cpuTicks(GatewayProcess gateway) {
		try {
			String stat = Files.readString(gateway.procPath("stat"));
			String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			return Long.parseLong(f[11]) + Long.parseLong(f[12]);
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

	private static double load1() {
		try {
			return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
		}
		catch (IOException | RuntimeException ex) {
			return Double.NaN;
		}
	}

	/**
	 * A gateway process of the soak.
	 * @param name its name in the report, e.g. {@code gateway-1}
	 * @param apiUri its API's base URI
	 * @param managementUri its actuator's base URI
	 * @param pid its process id
	 */
	record GatewayProcess(String name, URI apiUri, URI managementUri, long pid) {

		Path procPath(String entry) {
			return Path.of("/proc", Long.toString(this.pid), entry);
		}

		/**
		 * Parse {@code name,apiPort,managementPort,pid}.
		 * @param spec the option's value
		 * @return the process
		 */
		static GatewayProcess parse(String spec) {
			String[] f = spec.split(",");
			if (f.length != 4) {
				throw new IllegalArgumentException("--gateway takes name,apiPort,managementPort,pid, got " + spec);
			}
			return new GatewayProcess(f[0], URI.create("http://127.0.0.1:" + f[1]),
					URI.create("http://127.0.0.1:" + f[2]), Long.parseLong(f[3]));
		}

	}

	/**
	 * One gateway's state at a sample.
	 * @param threads live threads
	 * @param fds open file descriptors
	 * @param cpuTicks CPU time used so far, clock ticks
	 * @param heapUsedBytes heap in use (not after a collection), bytes
	 * @param checksBySource checks so far by decision source ({@code redis}, {@code local-fallback}, ...)
	 * @param redisErrors failed calls to Redis so far
	 */
	record GatewaySample(int threads, int fds, long cpuTicks, double heapUsedBytes, Map<String, Double> checksBySource,
			double redisErrors) {

		double checks(String source) {
			return this.checksBySource.getOrDefault(source, 0.0);
		}

	}

	/**
	 * One sample.
	 * @param beforeMicros when Redis was asked (wall clock, µs)
	 * @param afterMicros when it had answered
	 * @param gateways each gateway's state, in order
	 * @param dbsize keys in Redis
	 * @param usedMemory Redis' used_memory, bytes
	 * @param load1 the machine's 1-minute load average
	 */
	record Sample(long beforeMicros, long afterMicros, List<GatewaySample> gateways, long dbsize, long usedMemory,
			double load1) {
	}

	/**
	 * A gateway's heap right after a full collection.
	 * @param micros when it was read (wall clock, µs)
	 * @param gateway which gateway (0-based)
	 * @param liveBytes {@code jvm.gc.live.data.size}, bytes
	 */
	record GcSample(long micros, int gateway, double liveBytes) {
	}

}
