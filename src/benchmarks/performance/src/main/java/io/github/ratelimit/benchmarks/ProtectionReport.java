package io.github.ratelimit.benchmarks;

import java.awt.Color;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;

/**
 * Writes {@code protection-report.md} and its chart from the result files of one run of
 * {@code src/benchmarks/protection-run}: per run (route set), phase and traffic class the success rate, sheds,
 * goodput, latency of admitted requests and wasted work; the targets of issue 41 at 2×; the limit over time.
 */
final class ProtectionReport {

	/** Traffic classes in the order shown. */
	static final List<String> CLASSES = List.of("critical", "high", "low");

	/** The phase of the targets. */
	static final String TARGET_PHASE = "2x";

	/** The phase after the overload. */
	static final String RECOVERY_PHASE = "0.5x";

	/** The colour of each run in the goodput panel. */
	private static final Map<String, Color> RUN_COLORS = Map.of("none", new Color(0xd62728), "fixed",
			new Color(0xff7f0e), "adaptive", new Color(0x1f77b4), ProtectionGateway.UNSMOOTHED, new Color(0x17becf),
			"gradient", new Color(0x9467bd));

	/** A request as the driver recorded it. */
	record Request(String run, String phase, String trafficClass, double intendedMs, double lagMs, String outcome,
			int status, double latencyMs, double completedMs) {
	}

	/** What a run, phase (and class) got. */
	record Cell(int sent, int ok, int shed, int limited, int timeout, int other, double p50, double p99,
			double goodput) {
	}

	private final Properties machine;

	private final Properties gateway;

	private final List<Map<String, String>> phases;

	private final List<Map<String, String>> upstreamStats;

	private final List<Map<String, String>> drains;

	private final List<Request> requests;

	private final List<Map<String, String>> gatewaySamples;

	private final List<Map<String, String>> upstreamSamples;

	private final List<String> runs = new ArrayList<>();

	private final List<String> phaseNames = new ArrayList<>();

	private final double capacity;

	private final double timeoutMs;

	ProtectionReport(Path results) throws IOException {
		this.machine = ReportWriter.properties(results.resolve("machine.properties"));
		this.gateway = ReportWriter.properties(results.resolve("gateway.properties"));
		this.phases = Tsv.read(results.resolve("phases.tsv"));
		this.upstreamStats = Tsv.read(results.resolve("upstream-stats.tsv"));
		this.drains = Tsv.read(results.resolve("drain.tsv"));
		this.gatewaySamples = Tsv.read(results.resolve("gateway-samples.tsv"));
		this.upstreamSamples = Tsv.read(results.resolve("upstream-samples.tsv"));
		this.requests = readRequests(results.resolve("requests.tsv"));
		for (Map<String, String> phase : this.phases) {
			if (!this.runs.contains(phase.get("run"))) {
				this.runs.add(phase.get("run"));
			}
			if (!this.phaseNames.contains(phase.get("phase"))) {
				this.phaseNames.add(phase.get("phase"));
			}
		}
		this.capacity = Double.parseDouble(this.machine.getProperty("capacity", "320"));
		this.timeoutMs = Double.parseDouble(this.machine.getProperty("timeout_ms", "1000"));
	}

	static void write(Path results, Path markdown, Path chart) throws IOException {
		ProtectionReport report = new ProtectionReport(results);
		Files.createDirectories(markdown.toAbsolutePath().getParent());
		Files.writeString(markdown, new ProtectionReportText(report).markdown(chart.getFileName().toString()),
				StandardCharsets.UTF_8);
		report.chart(chart);
	}

	private static List<Request> readRequests(Path file) throws IOException {
		List<Request> requests = new ArrayList<>();
		if (!Files.exists(file)) {
			return requests;
		}
		try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
			String line = reader.readLine(); // header
			while ((line = reader.readLine()) != null) {
				String[] c = line.split("\t", -1);
				requests.add(new Request(c[0], c[1], c[2], Double.parseDouble(c[3]), Double.parseDouble(c[4]), c[5],
						Integer.parseInt(c[6]), Double.parseDouble(c[7]), Double.parseDouble(c[8])));
			}
		}
		return requests;
	}

	// ---------------------------------------------------------------- figures

	List<String> runs() {
		return this.runs;
	}

	List<String> phaseNames() {
		return this.phaseNames;
	}

	double capacity() {
		return this.capacity;
	}

	double timeoutMs() {
		return this.timeoutMs;
	}

	Properties machine() {
		return this.machine;
	}

	Properties gateway() {
		return this.gateway;
	}

	Map<String, String> phase(String run, String phase) {
		return this.phases.stream()
			.filter((row) -> row.get("run").equals(run) && row.get("phase").equals(phase))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("no phase " + phase + " in run " + run));
	}

	/** Seconds of a phase. */
	double seconds(String run, String phase) {
		Map<String, String> row = phase(run, phase);
		return (Long.parseLong(row.get("end_epoch_ms")) - Long.parseLong(row.get("start_epoch_ms"))) / 1000.0;
	}

	/** Where a phase starts, seconds after its run began. */
	double offset(String run, String phase) {
		return (Long.parseLong(phase(run, phase).get("start_epoch_ms")) - runStart(run)) / 1000.0;
	}

	long runStart(String run) {
		return Long.parseLong(phase(run, this.phaseNames.get(0)).get("start_epoch_ms"));
	}

	double runSeconds(String run) {
		String last = this.phaseNames.get(this.phaseNames.size() - 1);
		return (Long.parseLong(phase(run, last).get("end_epoch_ms")) - runStart(run)) / 1000.0;
	}

	/** What the requests of a run and phase (and class, or every class when null) got. */
	Cell cell(String run, String phase, String trafficClass) {
		List<Double> admitted = new ArrayList<>();
		int sent = 0;
		int ok = 0;
		int shed = 0;
		int limited = 0;
		int timeout = 0;
		int other = 0;
		for (Request r : this.requests) {
			if (!r.run().equals(run) || !r.phase().equals(phase)
					|| (trafficClass != null && !r.trafficClass().equals(trafficClass))) {
				continue;
			}
			sent++;
			switch (r.outcome()) {
				case "ok" -> ok++;
				case "shed" -> shed++;
				case "limited" -> limited++;
				case "timeout" -> timeout++;
				default -> other++;
			}
			if (!r.outcome().equals("shed") && !r.outcome().equals("limited")) {
				admitted.add(r.latencyMs());
			}
		}
		return new Cell(sent, ok, shed, limited, timeout, other, percentile(admitted, 50), percentile(admitted, 99),
				ok / seconds(run, phase) / this.capacity);
	}

	/** Requests of a run that the driver sent more than 10 ms after their arrival time; and the largest lag, ms. */
	double[] late(String run) {
		int late = 0;
		double max = 0;
		for (Request r : this.requests) {
			if (r.run().equals(run)) {
				late += (r.lagMs() > 10) ? 1 : 0;
				max = Math.max(max, r.lagMs());
			}
		}
		return new double[] { late, max };
	}

	/** Sheds of the recovery phase: how many in its first 5 s, and when the last one arrived (s after the drop; NaN: none). */
	double[] recovery(String run) {
		double start = offset(run, RECOVERY_PHASE) * 1000;
		int early = 0;
		double last = Double.NaN;
		for (Request r : this.requests) {
			if (r.run().equals(run) && r.phase().equals(RECOVERY_PHASE) && r.outcome().equals("shed")) {
				double after = (r.intendedMs() - start) / 1000;
				early += (after < 5) ? 1 : 0;
				last = Double.isNaN(last) ? after : Math.max(last, after);
			}
		}
		return new double[] { early, last };
	}

	/** Work the upstream finished after the client's deadline: {wasted, done} of a run and phase (and class). */
	long[] wasted(String run, String phase, String trafficClass) {
		long done = 0;
		long wasted = 0;
		for (Map<String, String> row : this.upstreamStats) {
			if (row.get("run").equals(run) && row.get("phase").equals(phase)
					&& (trafficClass == null || row.get("class").equals(trafficClass))) {
				done += Long.parseLong(row.get("done"));
				wasted += Long.parseLong(row.get("wasted"));
			}
		}
		return new long[] { wasted, done };
	}

	/** The upstream's mean service time over every request it served, ms (the sleep overshoots a little). */
	double meanServiceMs() {
		double nanos = 0;
		long done = 0;
		for (Map<String, String> row : this.upstreamStats) {
			nanos += Double.parseDouble(row.get("service_ns"));
			done += Long.parseLong(row.get("done"));
		}
		return (done == 0) ? Double.NaN : nanos / done / 1e6;
	}

	/** How long the upstream needed to become idle after a run, s. */
	double drainSeconds(String run) {
		return this.drains.stream()
			.filter((row) -> row.get("run").equals(run))
			.mapToDouble((row) -> Double.parseDouble(row.get("drain_ms")) / 1000)
			.findFirst()
			.orElse(Double.NaN);
	}

	/** A column of the gateway's samples of a run's protection within a phase: {min, median, max}. */
	double[] limitSamples(String run, String phase, String column) {
		return summary(samples(this.gatewaySamples, run, phase, (row) -> row.get("protection").equals(run), column));
	}

	/** Requests at the upstream (queued and in service) within a phase: {min, median, max}. */
	double[] upstreamSamples(String run, String phase) {
		return summary(samples(this.upstreamSamples, run, phase, (row) -> true, "queued+busy"));
	}

	private List<Double> samples(List<Map<String, String>> rows, String run, String phase,
			Predicate<Map<String, String>> filter, String column) {
		Map<String, String> p = phase(run, phase);
		long from = Long.parseLong(p.get("start_epoch_ms"));
		long to = Long.parseLong(p.get("end_epoch_ms"));
		List<Double> values = new ArrayList<>();
		for (Map<String, String> row : rows) {
			long t = Long.parseLong(row.get("epoch_ms"));
			if (t >= from && t < to && filter.test(row)) {
				values.add(value(row, column));
			}
		}
		return values;
	}

	private static double value(Map<String, String> row, String column) {
		double sum = 0;
		for (String part : column.split("\\+")) {
			sum += Double.parseDouble(row.get(part));
		}
		return sum;
	}

	private static double[] summary(List<Double> values) {
		if (values.isEmpty()) {
			return new double[] { Double.NaN, Double.NaN, Double.NaN };
		}
		return new double[] { Stats.min(values), Stats.median(values), Stats.max(values) };
	}

	static double percentile(List<Double> values, double p) {
		if (values.isEmpty()) {
			return Double.NaN;
		}
		double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
		Arrays.sort(sorted);
		int rank = (int) Math.ceil(p / 100 * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	// ---------------------------------------------------------------- chart

	private void chart(Path file) throws IOException {
		String first = this.runs.get(0);
		double seconds = runSeconds(first);
		List<ProtectionChart.Band> bands = new ArrayList<>();
		for (String phase : this.phaseNames) {
			double from = offset(first, phase);
			bands.add(new ProtectionChart.Band(phase.replace("x", "×") + " capacity", from,
					from + seconds(first, phase)));
		}
		List<ProtectionChart.Panel> panels = new ArrayList<>();
		Color limit = Color.BLACK;
		Color inFlight = Chart.PALETTE[0];
		Color upstream = new Color(0xd62728);
		for (String run : this.runs) {
			List<ProtectionChart.Line> lines = new ArrayList<>();
			long start = runStart(run);
			double end = runSeconds(run);
			List<Map<String, String>> own = this.gatewaySamples.stream()
				.filter((row) -> row.get("protection").equals(run))
				.toList();
			if (!own.isEmpty()) {
				lines.add(line("limit", limit, 2f, own, start, end, "limit"));
				lines.add(line("in flight through it", inFlight, 1.2f, own, start, end, "critical+high+normal+low"));
			}
			lines.add(line("at the upstream", upstream, 1.2f, this.upstreamSamples, start, end,
					"queued+busy"));
			String title = run.equals("none") ? "none: RateLimit without protect"
					: run + ": protection " + this.gateway.getProperty("describe." + run, run);
			panels.add(new ProtectionChart.Panel(title, "requests", lines,
					List.of(new Chart.RefLine("16 workers", 16, Color.GRAY))));
		}
		List<ProtectionChart.Line> goodput = new ArrayList<>();
		for (String run : this.runs) {
			int bins = (int) Math.ceil(runSeconds(run));
			double[] x = new double[bins];
			double[] y = new double[bins];
			for (Request r : this.requests) {
				int bin = (int) (r.completedMs() / 1000);
				if (r.run().equals(run) && r.outcome().equals("ok") && bin < bins) {
					y[bin]++;
				}
			}
			for (int b = 0; b < bins; b++) {
				x[b] = b + 0.5;
				y[b] /= this.capacity;
			}
			goodput.add(new ProtectionChart.Line(run, RUN_COLORS.getOrDefault(run, Color.GRAY), 1.5f, x, y));
		}
		panels.add(new ProtectionChart.Panel("goodput: answers within the timeout per second ÷ capacity", "÷ capacity",
				goodput, List.of(new Chart.RefLine("capacity", 1, Color.GRAY), new Chart.RefLine("target 0.9", 0.9,
						new Color(0x2ca02c)))));
		ProtectionChart.write(file, String.format(Locale.ROOT,
				"Upstream protection: a model upstream of %.0f requests/s, open loop, %s", this.capacity,
				this.machine.getProperty("date", "")), bands, seconds, panels);
	}

	private static ProtectionChart.Line line(String label, Color color, float width, List<Map<String, String>> rows,
			long start, double end, String column) {
		List<double[]> points = new ArrayList<>();
		for (Map<String, String> row : rows) {
			double t = (Long.parseLong(row.get("epoch_ms")) - start) / 1000.0;
			if (t >= 0 && t <= end) {
				points.add(new double[] { t, value(row, column) });
			}
		}
		double[] x = new double[points.size()];
		double[] y = new double[points.size()];
		for (int i = 0; i < points.size(); i++) {
			x[i] = points.get(i)[0];
			y[i] = points.get(i)[1];
		}
		return new ProtectionChart.Line(label, color, width, x, y);
	}

	/** Phases by name, in order, of the first run: for the text. */
	Map<String, Double> phaseMultiples() {
		Map<String, Double> multiples = new LinkedHashMap<>();
		for (String phase : this.phaseNames) {
			multiples.put(phase, Double.parseDouble(phase(this.runs.get(0), phase).get("multiple")));
		}
		return multiples;
	}

}
