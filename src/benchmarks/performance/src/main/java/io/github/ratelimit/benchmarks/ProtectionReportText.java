package io.github.ratelimit.benchmarks;

import java.util.Locale;
import java.util.Properties;

import io.github.ratelimit.benchmarks.ProtectionReport.Cell;

/** The markdown of the protection report, from the figures of a {@link ProtectionReport}. */
final class ProtectionReportText {

	/** Issue 41's targets at 2×. */
	static final double CRITICAL_SUCCESS = 0.99;

	static final double CRITICAL_P99_MS = 150;

	static final double GOODPUT = 0.90;

	static final double WASTED = 0.02;

	static final double QUIET_SECONDS = 5;

	private final ProtectionReport r;

	ProtectionReportText(ProtectionReport report) {
		this.r = report;
	}

	String markdown(String chartName) {
		StringBuilder md = new StringBuilder();
		Properties m = this.r.machine();
		md.append("# Upstream protection: benchmark report (issue 41)\n\n");
		md.append(String.format(Locale.ROOT,
				"A model upstream with a known capacity (%s workers × %s ms = %.0f requests/s, an unbounded queue) is "
						+ "driven open loop through a real Spring Cloud Gateway with the starter and a real Redis, at 1×, "
						+ "2× and 4× its capacity and then 0.5×, with a %.0f ms client timeout, in three traffic classes. "
						+ "The same traffic runs once per route set: without protection, with a fixed limit equal to the "
						+ "workers, adaptive (vegas, every default), vegas with the library's smoothing 1 instead of the "
						+ "starter's 0.2 (benchmark-only: the starter has no setting for it) and adaptive with "
						+ "`algorithm: gradient`. Every figure is "
						+ "from one run of `%s` (%s, %s cores shared with other work: figures are noisy; the machine is "
						+ "at the end). Written by `ProtectionReport` from the raw results; the section [Reading](#reading) "
						+ "is written by hand from these figures.\n\n",
				m.getProperty("workers", "16"), m.getProperty("service_ms", "50"), this.r.capacity(), this.r.timeoutMs(),
				m.getProperty("command", "src/benchmarks/protection-run"), m.getProperty("date", "?"),
				m.getProperty("nproc", "?")));
		targets(md);
		md.append("## The limit over time\n\n");
		md.append("![limit, requests in flight and at the upstream over each run, and goodput per second](")
			.append(chartName)
			.append(")\n\n");
		md.append("Per run: the protection's limit (black), the requests in flight through it at the gateway (blue), and "
				+ "the requests at the upstream, queued or in service (red), sampled every 100 ms; the phases are "
				+ "shaded. Last panel: successful answers per second ÷ capacity.\n\n");
		perRun(md);
		limits(md);
		method(md);
		machine(md);
		md.append("## Reading\n\n(written by hand from this run's figures)\n");
		return md.toString();
	}

	private void targets(StringBuilder md) {
		md.append("## At 2× capacity, against the targets\n\n");
		md.append(String.format(Locale.ROOT,
				"Targets of issue 41 at 2×: the critical class keeps at least %.0f %% success with p99 at most %.0f ms "
						+ "(3 × the service time); goodput at least %.0f %% of capacity; wasted work at most %.0f %%; "
						+ "after the load drops back to 0.5×, nothing shed within %.0f s.\n\n",
				100 * CRITICAL_SUCCESS, CRITICAL_P99_MS, 100 * GOODPUT, 100 * WASTED, QUIET_SECONDS));
		md.append("| run | critical success | critical p99 | goodput ÷ capacity | wasted work | after the drop to 0.5×: "
				+ "last shed (sheds in the first 5 s) | targets |\n|---|---|---|---|---|---|---|\n");
		for (String run : this.r.runs()) {
			Cell critical = this.r.cell(run, ProtectionReport.TARGET_PHASE, "critical");
			Cell all = this.r.cell(run, ProtectionReport.TARGET_PHASE, null);
			double success = ratio(critical.ok(), critical.sent());
			long[] wasted = this.r.wasted(run, ProtectionReport.TARGET_PHASE, null);
			double wastedRatio = ratio(wasted[0], wasted[1]);
			double[] recovery = this.r.recovery(run);
			int missed = 0;
			StringBuilder misses = new StringBuilder();
			if (success < CRITICAL_SUCCESS) {
				missed++;
				misses.append(String.format(Locale.ROOT, "critical success %.1f points short; ",
						100 * (CRITICAL_SUCCESS - success)));
			}
			if (!(critical.p99() <= CRITICAL_P99_MS)) {
				missed++;
				misses.append(String.format(Locale.ROOT, "critical p99 %s ms over; ",
						ReportWriter.n(critical.p99() - CRITICAL_P99_MS)));
			}
			if (all.goodput() < GOODPUT) {
				missed++;
				misses.append(String.format(Locale.ROOT, "goodput %.1f points short; ", 100 * (GOODPUT - all.goodput())));
			}
			if (!(wastedRatio <= WASTED)) {
				missed++;
				misses.append(String.format(Locale.ROOT, "wasted %.1f points over; ", 100 * (wastedRatio - WASTED)));
			}
			if (recovery[1] >= QUIET_SECONDS) {
				missed++;
				misses.append(String.format(Locale.ROOT, "still shedding %.1f s after the drop; ", recovery[1]));
			}
			String verdict = (missed == 0) ? "**all met**"
					: "**" + missed + " of 5 missed**: " + misses.toString().replaceAll("; $", "");
			md.append(String.format(Locale.ROOT, "| %s | %s (%d of %d) | %s | %s | %s (%d of %d) | %s (%.0f) | %s |\n",
					run, pct(success), critical.ok(), critical.sent(), latency(critical.p99()), n2(all.goodput()),
					pct(wastedRatio), wasted[0], wasted[1],
					Double.isNaN(recovery[1]) ? "none shed" : String.format(Locale.ROOT, "%.2f s", recovery[1]),
					recovery[0], verdict));
		}
		md.append("\nRuns: ");
		for (String run : this.r.runs()) {
			md.append('`').append(run).append("` ").append(this.r.gateway().getProperty("describe." + run, run))
				.append(run.equals(this.r.runs().get(this.r.runs().size() - 1)) ? ".\n\n" : "; ");
		}
		int limited = 0;
		for (String run : this.r.runs()) {
			for (String phase : this.r.phaseNames()) {
				limited += this.r.cell(run, phase, null).limited();
			}
		}
		md.append(String.format(Locale.ROOT,
				"The last target is read as the design page states it: shedding stops within %.0f s of the drop (the "
						+ "last shed arrives less than %.0f s after it). Read strictly (not one shed in those %.0f s), "
						+ "it also needs the count in brackets to be 0: the requests that arrive in the first moments "
						+ "after the drop can still find the limit full of requests admitted at 4×. Answers 429 (a rate "
						+ "limit refused) in all runs and phases: %d (the plans are generous: 0 expected).\n\n",
				QUIET_SECONDS, QUIET_SECONDS, QUIET_SECONDS, limited));
		md.append("Success: a 2xx answer within the timeout. Latency: from the request's arrival time in the open-loop "
				+ "schedule to its answer, of admitted requests (not shed), a request that timed out counting as the "
				+ "timeout. Goodput: successful answers of every class per second of the phase ÷ the capacity. Wasted: "
				+ "requests the upstream finished after their client's deadline ÷ all it finished of that phase.\n\n");
	}

	private void perRun(StringBuilder md) {
		md.append("## Per run, phase and class\n\n");
		for (String run : this.r.runs()) {
			double[] late = this.r.late(run);
			md.append("### ").append(run).append(": ").append(this.r.gateway().getProperty("describe." + run, run))
				.append("\n\n");
			md.append("| phase | class | sent | success | shed (503) | timed out | 429 | other | p50 | p99 | goodput ÷ "
					+ "capacity | wasted work |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
			for (String phase : this.r.phaseNames()) {
				for (String trafficClass : ProtectionReport.CLASSES) {
					row(md, run, phase, trafficClass);
				}
				row(md, run, phase, null);
			}
			md.append(String.format(Locale.ROOT,
					"\nSent more than 10 ms after their arrival time: %.0f requests (largest lag %.0f ms). The upstream "
							+ "was idle again %.1f s after the run's last request.\n\n",
					late[0], late[1], this.r.drainSeconds(run)));
		}
	}

	private void row(StringBuilder md, String run, String phase, String trafficClass) {
		Cell c = this.r.cell(run, phase, trafficClass);
		long[] wasted = this.r.wasted(run, phase, trafficClass);
		String name = (trafficClass != null) ? trafficClass : "**all**";
		md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %d | %d | %d | %d | %s | %s | %s | %s |\n",
				phase, name, c.sent(), pct(ratio(c.ok(), c.sent())), c.shed(), c.timeout(), c.limited(), c.other(),
				latency(c.p50()), latency(c.p99()), n2(c.goodput()), pct(ratio(wasted[0], wasted[1]))));
	}

	private void limits(StringBuilder md) {
		md.append("## Limit and upstream by phase\n\n");
		md.append("From the samples every 100 ms: the protection's limit and the requests in flight through it "
				+ "(`UpstreamProtection.limit()` and `inFlight(priority)` from the `UpstreamProtections` bean, read by "
				+ "the benchmark gateway), and the requests at the upstream (queued + in service): min / median / "
				+ "max.\n\n");
		md.append("| run | phase | limit | in flight through the protection | at the upstream |\n|---|---|---|---|---|\n");
		for (String run : this.r.runs()) {
			for (String phase : this.r.phaseNames()) {
				md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |\n", run, phase,
						triple(this.r.limitSamples(run, phase, "limit")),
						triple(this.r.limitSamples(run, phase, "critical+high+normal+low")),
						triple(this.r.upstreamSamples(run, phase))));
			}
		}
		md.append('\n');
	}

	private void method(StringBuilder md) {
		Properties m = this.r.machine();
		md.append("## Method\n\n");
		md.append(String.format(Locale.ROOT,
				"- **Upstream** (`BenchmarkMain model-upstream`, [`ModelUpstream`](../../benchmarks/performance/src/main/java/io/github/ratelimit/benchmarks/ModelUpstream.java), "
						+ "a JVM of its own): Reactor Netty; %s worker threads behind an unbounded FIFO queue, each "
						+ "request served by sleeping %s ms (a model of work: measured mean %.2f ms per request, the "
						+ "sleep's overshoot included). Every request reaching a worker is served, even if its client has "
						+ "gone, as a thread-pool server does; one finished after its client's deadline (header "
						+ "`X-Client-Deadline`) counts as wasted. Counters per run, phase and class (header "
						+ "`X-Bench-Tag`), read by the driver after each run from `GET /stats`; queue sampled every 100 "
						+ "ms.\n",
				m.getProperty("workers", "16"), m.getProperty("service_ms", "50"), this.r.meanServiceMs()));
		md.append("- **Gateway** (`BenchmarkMain protection-gateway`, [`ProtectionGateway`](../../benchmarks/performance/src/main/java/io/github/ratelimit/benchmarks/ProtectionGateway.java), "
				+ "a JVM of its own): Spring Cloud Gateway (WebFlux) with the starter, no actuator or meter registry, "
				+ "against the run's Redis. Per run a route set `/<run>/login/**` (`RateLimit`, group `login`, "
				+ "key-by ip, `priority: critical`) and `/<run>/api/**` (group `api`, key-by api-key: 20 keys of plan "
				+ "`gold`, priority high, and 20 of plan `free`, priority low), each with `protect: <run>` except in "
				+ "run `none`. Every plan allows 1,000,000 requests a second (no 429 expected: the tables count them). "
				+ "Shares: " + this.r.gateway().getProperty("shares.fixed", "the defaults") + " (the defaults). "
				+ "Protections: fixed `" + this.r.gateway().getProperty("describe.fixed", "?") + "`, adaptive `"
				+ this.r.gateway().getProperty("describe.adaptive", "?") + "`, " + ProtectionGateway.UNSMOOTHED + " `"
				+ this.r.gateway().getProperty("describe." + ProtectionGateway.UNSMOOTHED, "?") + "`, gradient `"
				+ this.r.gateway().getProperty("describe.gradient", "?") + "`.\n");
		md.append(String.format(Locale.ROOT,
				"- **Driver** (`BenchmarkMain protection-drive`, [`ProtectionDriver`](../../benchmarks/performance/src/main/java/io/github/ratelimit/benchmarks/ProtectionDriver.java)): "
						+ "open loop, Poisson arrivals from one seed (the same traffic in every run), classes critical "
						+ "15 %%, high 35 %%, low 50 %%; phases %s back to back; Reactor Netty HTTP/1.1 client; a request "
						+ "is sent at its arrival time whatever happened to earlier ones (one the sender could not send "
						+ "on time is sent late and counted, never skipped), and its client waits %.0f ms from that "
						+ "arrival time, then closes the connection (the gateway then cancels its upstream call). A "
						+ "warm-up of 0.8× on the route sets `none` and `fixed` comes first; before each run the driver "
						+ "waits until the upstream is idle. Runs in the order %s, on the same upstream, Redis and "
						+ "gateway process.\n\n",
				phasesText(), this.r.timeoutMs(), String.join(", ", this.r.runs())));
	}

	private String phasesText() {
		StringBuilder text = new StringBuilder();
		String first = this.r.runs().get(0);
		for (String phase : this.r.phaseNames()) {
			if (!text.isEmpty()) {
				text.append(", ");
			}
			text.append(phase.replace("x", "×"))
				.append(String.format(Locale.ROOT, " for %.0f s", this.r.seconds(first, phase)));
		}
		return text.toString();
	}

	private void machine(StringBuilder md) {
		Properties m = this.r.machine();
		md.append("## Machine, versions, command\n\n| | |\n|---|---|\n");
		cell(md, "date", m.getProperty("date", "?"));
		cell(md, "command", "`" + m.getProperty("command", "?") + "`");
		cell(md, "commit", m.getProperty("git_commit", "?") + " (" + m.getProperty("git_status", "?") + ")");
		cell(md, "CPU", m.getProperty("cpu_model", "?") + ", `nproc` = " + m.getProperty("nproc", "?")
				+ ", shared with other work");
		cell(md, "memory", m.getProperty("memory", "?"));
		cell(md, "OS", m.getProperty("os", "?") + ", kernel " + m.getProperty("kernel", "?"));
		cell(md, "load average (1, 5, 15 min)", "before: " + m.getProperty("load_before", "?") + " ("
				+ m.getProperty("load_wait", "?") + "); after: "
				+ m.getProperty("load_after", "?") + "; during (1-min figure every 5 s): "
				+ m.getProperty("load_during", "?"));
		cell(md, "other processes at the start (CPU % over their life, above 10 %)",
				m.getProperty("others_at_start", "?"));
		cell(md, "Java", m.getProperty("java_version", "?"));
		cell(md, "JVMs", "gateway `" + m.getProperty("gateway_jvm", "?") + "`, upstream `"
				+ m.getProperty("upstream_jvm", "?") + "`, driver `" + m.getProperty("driver_jvm", "?") + "`");
		cell(md, "Redis", m.getProperty("redis_version", "?") + " (fresh `redis-server` on loopback, no persistence)");
		cell(md, "wall time", m.getProperty("run_seconds", "?") + " s");
		md.append('\n');
	}

	private static void cell(StringBuilder md, String key, String value) {
		md.append("| ").append(key).append(" | ").append(value.replace("|", "\\|")).append(" |\n");
	}

	private static double ratio(double part, double whole) {
		return (whole == 0) ? Double.NaN : part / whole;
	}

	private static String pct(double ratio) {
		if (Double.isNaN(ratio)) {
			return "-";
		}
		return (ratio == 1 || ratio == 0 || ratio >= 0.995 && ratio < 1 || ratio > 0 && ratio < 0.001)
				? String.format(Locale.ROOT, "%.2f %%", 100 * ratio) : String.format(Locale.ROOT, "%.1f %%", 100 * ratio);
	}

	private String latency(double ms) {
		if (Double.isNaN(ms)) {
			return "-";
		}
		return (ms >= this.r.timeoutMs()) ? "≥ " + ReportWriter.n(this.r.timeoutMs()) + " ms (timeout)"
				: ReportWriter.n(ms) + " ms";
	}

	private static String n2(double v) {
		return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
	}

	private static String triple(double[] v) {
		if (Double.isNaN(v[0])) {
			return "-";
		}
		return ReportWriter.n(v[0]) + " / " + ReportWriter.n(v[1]) + " / " + ReportWriter.n(v[2]);
	}

}
