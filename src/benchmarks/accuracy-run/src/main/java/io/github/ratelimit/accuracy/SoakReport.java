package io.github.ratelimit.accuracy;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The soak's Markdown report, its raw samples (TSV) and the class-histogram growth between two points. */
final class SoakReport {

	static final String HISTOGRAM_GROWTH = "histogram-growth.md";

	static final String STALLS = "stalls.md";

	static final String RUN = "soak-run.properties";

	private static final java.util.regex.Pattern PAUSE = java.util.regex.Pattern
		.compile("Pause (Young|Remark|Cleanup).* ([0-9.]+)ms$");

	private SoakReport() {
	}

	static String markdown(SoakAnalysis a, List<SoakAnalysis.Verdict> verdicts, String chartName, List<String> facts) {
		SoakRun.Options o = a.options();
		List<SoakAnalysis.Minute> rows = a.perMinute();
		int gateways = o.gateways().size();
		StringBuilder md = new StringBuilder();
		boolean all = verdicts.stream().allMatch(SoakAnalysis.Verdict::holds);
		md.append("# Soak report\n\n");
		md.append(String.format(Locale.ROOT,
				"Issue 15, part 4 (hours of load; a harness, not a CI test). %d minutes from %s: %d sample gateways "
						+ "(the `sample-gateway` jar, each its own JVM) sharing one Redis, %d clients active at any "
						+ "time, churning, each at %sx its plan's rate. Verdict: **%s**. Made by:\n\n",
				o.minutes(), SoakRun.utc(a.startMicros()), gateways, o.clients(), trim(o.overload()),
				all ? "every claim held" : "FAILED"));
		md.append("```bash\n").append(o.command()).append("\n```\n\n");
		md.append("## Machine\n\n");
		for (String fact : facts) {
			md.append("- ").append(fact).append('\n');
		}
		double minLoad = Double.POSITIVE_INFINITY;
		double maxLoad = 0;
		double sumLoad = 0;
		int n = 0;
		for (SoakSampler.Sample s : a.samples()) {
			if (!Double.isNaN(s.load1())) {
				minLoad = Math.min(minLoad, s.load1());
				maxLoad = Math.max(maxLoad, s.load1());
				sumLoad += s.load1();
				n++;
			}
		}
		md.append(String.format(Locale.ROOT,
				"- 1-minute load average during the run: %.2f to %.2f, mean %.2f. The machine was shared: other "
						+ "engineers ran test suites on its 2 cores meanwhile. The verdicts are about leaks and "
						+ "correctness, not speed, and must hold anyway.\n\n",
				(n == 0) ? Double.NaN : minLoad, maxLoad, (n == 0) ? Double.NaN : sumLoad / n));
		md.append("## Setup\n\n");
		md.append(String.format(Locale.ROOT,
				"- Gateways: %s, each started with `TRUSTED_PROXIES=1` (so the one `X-Forwarded-For` entry a client "
						+ "sends is its address) and the sample's own `application.yml` otherwise (Redis timeout "
						+ "100 ms, local fallback, over-limit cache as the starter defaults), `-Xmx256m`, G1.\n",
				String.join(", ", o.gateways().stream().map(SoakSampler.GatewayProcess::name).toList())));
		md.append(String.format(Locale.ROOT,
				"- Route `%s` (the sample's `public` route, `key-by: ip`), plan `anonymous`: capacity %d, %d tokens "
						+ "per %d s (token bucket), %d Redis key per client; a key lives at most %d s after its last "
						+ "write (the time the bucket takes to fill).\n",
				o.path(), o.capacity(), o.refillTokens(), o.refillPeriod().toSeconds(), o.keysPerClient(),
				a.keyTtlMicros() / 1_000_000));
		md.append(String.format(Locale.ROOT,
				"- Load (`SoakLoad`): %d clients at any time, each its own IP address, one request every %.0f ms "
						+ "(%sx the refill rate), open loop, alternating between the gateways; %d clients in all: "
						+ "each lives %d to %d s (uniformly), then stops and a new client takes its place. About %.0f "
						+ "requests/s in all.\n",
				o.clients(), 1000.0 * o.refillPeriod().toMillis() / 1000.0 / o.refillTokens() / o.overload(),
				trim(o.overload()), a.clients().size(), o.minLifetime().toSeconds(), o.maxLifetime().toSeconds(),
				o.clients() * o.overload() * o.refillTokens() / o.refillPeriod().toSeconds()));
		md.append(String.format(Locale.ROOT,
				"- Samples (`SoakSampler`) every %d s: threads (`/proc/<pid>/task`), open file descriptors "
						+ "(`/proc/<pid>/fd`), CPU, the starter's check counters (actuator), Redis `DBSIZE` and "
						+ "`used_memory`; every %d s the heap after GC: `jcmd <pid> GC.run` (a full collection), then "
						+ "the actuator's `jvm.gc.live.data.size` (bytes after that collection). Before the load each "
						+ "gateway took 1,000 warm-up requests (their keys deleted); the flatness verdicts look at the "
						+ "last two thirds of the run.\n\n",
				o.sampleEvery().toSeconds(), o.gcEvery().toSeconds()));
		md.append("## Verdicts\n\n| claim | rule | measured | |\n|---|---|---|---|\n");
		for (SoakAnalysis.Verdict v : verdicts) {
			md.append("| ").append(v.name()).append(" | ").append(v.rule()).append(" | ").append(v.figure())
				.append(" | ").append(v.holds() ? "held" : "**FAILED**").append(" |\n");
		}
		md.append("\n![heap after GC, Redis keys and admitted per minute](").append(chartName).append(")\n\n");
		md.append("## Per minute\n\n");
		md.append("Admitted is per send minute; *exact* is what a single exact token bucket admits when fed the "
				+ "requests the shared limiter answered, at their send times (compare it with admitted minus those "
				+ "admitted by the fallback); *excess* is the largest number admitted in an interval ending in "
				+ "that minute minus rate × its length, over all clients (the bound is the capacity, "
				+ o.capacity() + "); heap is after the minute's last full GC.\n\n");
		StringBuilder head = new StringBuilder("| min | clients | started | stopped | sent | admitted | of them by fallback | exact | 429 "
				+ "| 5xx | no answer | client-min over | excess | fell back | Redis errors | keys max | key bound |");
		StringBuilder rule = new StringBuilder("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
				+ "---:|---:|");
		for (SoakSampler.GatewayProcess g : o.gateways()) {
			head.append(' ').append(g.name()).append(" heap MB / threads / fds |");
			rule.append("---:|");
		}
		head.append(" gateways' CPU | load |");
		rule.append("---:|---:|");
		md.append(head).append('\n').append(rule).append('\n');
		for (SoakAnalysis.Minute m : rows) {
			md.append(String.format(Locale.ROOT,
					"| %d | %d | %d | %d | %,d | %,d | %,d | %,d | %,d | %d | %d | %d of %d | %.2f | %.0f | %.0f | %d | %d |",
					m.index + 1, m.clientMinutes, m.started, m.stopped, m.sent, m.admitted, m.fallbackAdmitted, m.exact,
					m.denied,
					m.serverErrors, m.unanswered, m.violations, m.clientMinutes, m.worstExcess, m.fallbacks,
					m.redisErrors, m.maxKeys, m.keyBound));
			for (int g = 0; g < gateways; g++) {
				md.append(String.format(Locale.ROOT, " %s / %d / %d |",
						Double.isNaN(m.heapMb[g]) ? "-" : String.format(Locale.ROOT, "%.1f", m.heapMb[g]),
						m.maxThreads[g], m.maxFds[g]));
			}
			md.append(String.format(Locale.ROOT, " %.0f%% | %.2f |\n", m.cpuTicks / 100.0 / 60 * 100, m.meanLoad()));
		}
		List<String> violations = new ArrayList<>();
		rows.forEach((m) -> violations.addAll(m.violationExamples));
		if (!violations.isEmpty()) {
			md.append("\n### Client-minutes over the bound\n\n");
			violations.stream().limit(20).forEach((v) -> md.append("- ").append(v).append('\n'));
		}
		Path stalls = o.out().resolve(STALLS);
		if (Files.exists(stalls)) {
			try {
				md.append('\n').append(Files.readString(stalls));
			}
			catch (IOException ex) {
				// left out
			}
		}
		Path growth = o.out().resolve(HISTOGRAM_GROWTH);
		if (Files.exists(growth)) {
			try {
				md.append('\n').append(Files.readString(growth));
			}
			catch (IOException ex) {
				// left out
			}
		}
		md.append("\n## Reading it\n\n");
		md.append("- **Keys**: `DBSIZE` counts every key Redis holds, including expired keys its expiry cycle has not "
				+ "removed yet; the bound at a sample counts, for every client whose first request was sent before "
				+ "the sample and whose last request was answered less than TTL + slack before it (a request writes "
				+ "before it is answered; a client with a request never answered counts to the end), its keys, plus the fixed "
				+ "keys (the instance registry `rl:instances`) present before the first client. With a steady number "
				+ "of active clients, a key count that grows with the number of clients ever seen (a key without a "
				+ "TTL) would cross it within a TTL. Dips below the bound are expected: while the breaker is open "
				+ "nothing is written, and a bucket's key lives only until the bucket would be full again.\n");
		md.append("- **Admitted**: the bound of the accuracy report (`src/docs/reports/accuracy-report.md`, `UpperBound`): "
				+ "per client, never more than capacity + rate × t over any interval. Send times stand in for Redis "
				+ "times, so each client's allowance grows by rate × its longest round trip. *Exact* below "
				+ "*admitted* is expected: the over-limit cache denies a client locally until its Retry-After (whole "
				+ "seconds, rounded up), and a denied client's requests arrive at two instances.\n");
		md.append("- **Fell back**: checks decided by the local fallback (Redis slower than the sample's 100 ms "
				+ "timeout, or the breaker open), from the gateways' `ratelimit.check.duration` counters; *of them by "
				+ "fallback*: admitted answers without the `RateLimit` field (the starter writes none for a fallback "
				+ "decision). Fail open is the design: such an admission is limited by this instance's share of the "
				+ "plan, not by the shared bucket, so only the shared limiter's admissions are held to the bound.\n");
		md.append("- Raw samples: `soak-samples.tsv`, `soak-heap.tsv`, `soak-requests.tsv` and the class histograms in "
				+ "the run's output directory (not committed).\n");
		return md.toString();
	}

	private static String trim(double v) {
		return (v == Math.rint(v)) ? Long.toString((long) v) : Double.toString(v);
	}

	static void writeSamples(SoakAnalysis a, Path out) throws IOException {
		try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("soak-samples.tsv")))) {
			w.println("seconds\tdbsize\tused_memory\tload1\tkey_bound\tgateway\tthreads\tfds\tcpu_ticks\theap_used\t"
					+ "checks_by_source\tredis_errors\tafter_seconds");
			for (SoakSampler.Sample s : a.samples()) {
				long bound = a.keyBound(s);
				for (int g = 0; g < s.gateways().size(); g++) {
					SoakSampler.GatewaySample gs = s.gateways().get(g);
					w.printf(Locale.ROOT, "%.6f\t%d\t%d\t%.2f\t%d\t%d\t%d\t%d\t%d\t%.0f\t%s\t%.0f\t%.6f%n",
							(s.beforeMicros() - a.startMicros()) / 1e6, s.dbsize(), s.usedMemory(), s.load1(), bound, g,
							gs.threads(), gs.fds(), gs.cpuTicks(), gs.heapUsedBytes(), gs.checksBySource(),
							gs.redisErrors(), (s.afterMicros() - a.startMicros()) / 1e6);
				}
			}
		}
		try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("soak-heap.tsv")))) {
			w.println("seconds\tgateway\tlive_bytes");
			for (SoakSampler.GcSample gc : a.gcSamples()) {
				w.printf(Locale.ROOT, "%.6f\t%d\t%.0f%n", (gc.micros() - a.startMicros()) / 1e6, gc.gateway(),
						gc.liveBytes());
			}
		}
		try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("soak-requests.tsv")))) {
			w.println("client\taddress\tsent_us\tanswered_us\tstatus\tinstance\tshared");
			for (SoakClient c : a.clients()) {
				for (SoakClient.Response r : c.responses()) {
					w.printf(Locale.ROOT, "%d\t%s\t%d\t%d\t%d\t%d\t%d%n", c.id(), c.address(),
							r.sentMicros() - a.startMicros(), r.answeredMicros() - a.startMicros(), r.status(), r.instance(),
							r.shared() ? 1 : 0);
				}
			}
		}
	}

	/**
	 * Where the fallbacks come from: Redis' own time per script call ({@code INFO commandstats}) against the
	 * gateways' GC pauses (their {@code -Xlog:gc} files, forced full collections left out) and the machine's load.
	 */
	static String stalls(String evalsha, SoakRun.Options o) {
		StringBuilder md = new StringBuilder("## Why checks fell back\n\n");
		md.append("Redis' own time per script call over the run (`INFO commandstats`, `cmdstat_evalsha`): `")
			.append(evalsha)
			.append("`. The 100 ms Redis timeout is measured in the gateway, from the call to the answer, so it "
					+ "includes the gateway's own stalls: its GC pauses (below, from `-Xlog:gc`, forced full "
					+ "collections left out) and waiting for a core on a shared machine.\n\n");
		md.append("| gateway | GC pauses | longest | over 100 ms |\n|---|---:|---:|---:|\n");
		for (SoakSampler.GatewayProcess g : o.gateways()) {
			Path log = o.out().resolve(g.name() + "-gc.log");
			int count = 0;
			int over = 0;
			double longest = 0;
			if (Files.exists(log)) {
				try {
					for (String line : Files.readAllLines(log)) {
						java.util.regex.Matcher m = PAUSE.matcher(line);
						if (m.find()) {
							double ms = Double.parseDouble(m.group(2));
							count++;
							longest = Math.max(longest, ms);
							if (ms > 100) {
								over++;
							}
						}
					}
				}
				catch (IOException | RuntimeException ex) {
					// left out
				}
			}
			md.append(String.format(Locale.ROOT, "| %s | %d | %.1f ms | %d |\n", g.name(), count, longest, over));
		}
		return md.toString();
	}

	/**
	 * A finished run read back from its output directory ({@code --reanalyze}): {@value #RUN} (start, end, fixed and
	 * drained keys), {@code soak-requests.tsv}, {@code soak-samples.tsv}, {@code soak-heap.tsv}. A client stops one
	 * interval after its last request. Samples written before {@code after_seconds} existed are taken as instant.
	 */
	static SoakAnalysis readRun(SoakRun.Options o) throws IOException {
		Path dir = o.reanalyze();
		java.util.Properties run = new java.util.Properties();
		try (var in = Files.newBufferedReader(dir.resolve(RUN))) {
			run.load(in);
		}
		long start = Long.parseLong(run.getProperty("start_us"));
		long end = Long.parseLong(run.getProperty("end_us"));
		long interval = (long) (o.refillPeriod().toNanos() / 1000.0 / o.refillTokens() / o.overload());
		java.util.TreeMap<Integer, List<SoakClient.Response>> byClient = new java.util.TreeMap<>();
		Map<Integer, String> addresses = new java.util.HashMap<>();
		List<String> lines = Files.readAllLines(dir.resolve("soak-requests.tsv"));
		for (String line : lines.subList(1, lines.size())) {
			String[] f = line.split("\t");
			int id = Integer.parseInt(f[0]);
			addresses.put(id, f[1]);
			byClient.computeIfAbsent(id, (k) -> new ArrayList<>())
				.add(new SoakClient.Response(start + Long.parseLong(f[2]), start + Long.parseLong(f[3]),
						Integer.parseInt(f[4]), Integer.parseInt(f[5]), f.length > 6 && f[6].equals("1")));
		}
		List<SoakClient> clients = new ArrayList<>();
		for (Map.Entry<Integer, List<SoakClient.Response>> e : byClient.entrySet()) {
			long first = e.getValue().stream().mapToLong(SoakClient.Response::sentMicros).min().orElse(start);
			long last = e.getValue().stream().mapToLong(SoakClient.Response::sentMicros).max().orElse(start);
			long stop = Math.min(end, last + interval);
			SoakClient client = new SoakClient(e.getKey(), addresses.get(e.getKey()), first, stop, stop >= end);
			e.getValue().forEach(client::record);
			clients.add(client);
		}
		List<String> sampleLines = Files.readAllLines(dir.resolve("soak-samples.tsv"));
		List<String[]> ordered = new ArrayList<>();
		for (String line : sampleLines.subList(1, sampleLines.size())) {
			ordered.add(line.split("\t"));
		}
		List<SoakSampler.Sample> samples = new ArrayList<>();
		int gateways = o.gateways().size();
		for (int i = 0; i + gateways <= ordered.size(); i += gateways) {
			String[] head = ordered.get(i);
			List<SoakSampler.GatewaySample> states = new ArrayList<>();
			for (int g = 0; g < gateways; g++) {
				String[] f = ordered.get(i + g);
				Map<String, Double> checks = new java.util.TreeMap<>();
				String map = f[10].replaceAll("[{}]", "").trim();
				if (!map.isEmpty()) {
					for (String entry : map.split(", ")) {
						String[] kv = entry.split("=");
						checks.put(kv[0], Double.parseDouble(kv[1]));
					}
				}
				states.add(new SoakSampler.GatewaySample(Integer.parseInt(f[6]), Integer.parseInt(f[7]),
						Long.parseLong(f[8]), Double.parseDouble(f[9]), checks, Double.parseDouble(f[11])));
			}
			long before = start + (long) (Double.parseDouble(head[0]) * 1e6);
			long after = (head.length > 12) ? start + (long) (Double.parseDouble(head[12]) * 1e6) : before;
			samples.add(new SoakSampler.Sample(before, after, states, Long.parseLong(head[1]), Long.parseLong(head[2]),
					Double.parseDouble(head[3])));
		}
		List<SoakSampler.GcSample> gc = new ArrayList<>();
		List<String> heapLines = Files.readAllLines(dir.resolve("soak-heap.tsv"));
		for (String line : heapLines.subList(1, heapLines.size())) {
			String[] f = line.split("\t");
			gc.add(new SoakSampler.GcSample(start + (long) (Double.parseDouble(f[0]) * 1e6), Integer.parseInt(f[1]),
					Double.parseDouble(f[2])));
		}
		return new SoakAnalysis(o, start, end, clients, samples, gc, Long.parseLong(run.getProperty("fixed_keys")),
				Long.parseLong(run.getProperty("drained_keys")));
	}

	/** The classes whose bytes grew most between two histograms per gateway, as a Markdown section in out. */
	static void writeHistogramGrowth(List<Map<String, Long>> from, List<Map<String, Long>> to, SoakRun.Options o)
			throws IOException {
		StringBuilder md = new StringBuilder("## Heap by class, a third into the run and at its end\n\n");
		md.append("`jcmd <pid> GC.class_histogram` (after a full GC): the classes whose bytes grew most between the two, "
				+ "per gateway.\n\n| gateway | class | bytes then | bytes at the end | growth |\n|---|---|---:|---:|---:|\n");
		for (int g = 0; g < Math.min(from.size(), to.size()); g++) {
			Map<String, Long> a = from.get(g);
			Map<String, Long> b = to.get(g);
			Set<String> names = new HashSet<>(a.keySet());
			names.addAll(b.keySet());
			long totalA = a.values().stream().mapToLong(Long::longValue).sum();
			long totalB = b.values().stream().mapToLong(Long::longValue).sum();
			String gateway = o.gateways().get(g).name();
			names.stream()
				.sorted((x, y) -> Long.compare(b.getOrDefault(y, 0L) - a.getOrDefault(y, 0L),
						b.getOrDefault(x, 0L) - a.getOrDefault(x, 0L)))
				.limit(6)
				.forEach((name) -> md.append(String.format(Locale.ROOT, "| %s | `%s` | %,d | %,d | %+,d |\n", gateway,
						name, a.getOrDefault(name, 0L), b.getOrDefault(name, 0L),
						b.getOrDefault(name, 0L) - a.getOrDefault(name, 0L))));
			md.append(String.format(Locale.ROOT, "| %s | all classes | %,d | %,d | %+,d |\n", gateway, totalA, totalB,
					totalB - totalA));
		}
		Files.writeString(o.out().resolve(HISTOGRAM_GROWTH), md.toString());
	}

}
