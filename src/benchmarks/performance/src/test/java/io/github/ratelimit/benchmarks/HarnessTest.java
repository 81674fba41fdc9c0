package io.github.ratelimit.benchmarks;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** Fast checks of the harness' own logic; the benchmarks themselves run only from src/benchmarks/run. */
class HarnessTest {

	@Test
	void medianOfOddAndEvenCounts() {
		assertThat(Stats.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
		assertThat(Stats.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
		assertThat(Stats.median(List.of())).isNaN();
	}

	@Test
	void commandStatsCountScriptsAndAllButInfo() {
		String info = "# Commandstats\r\ncmdstat_evalsha:calls=120,usec=5,usec_per_call=0.1,rejected_calls=0,failed_calls=0\r\n"
				+ "cmdstat_eval:calls=3,usec=5\r\ncmdstat_hmget:calls=123,usec=1\r\ncmdstat_info:calls=7,usec=1\r\n";
		Map<String, Long> calls = CommandStats.parse(info);
		assertThat(CommandStats.scriptCalls(calls)).isEqualTo(123);
		assertThat(CommandStats.allCalls(calls)).isEqualTo(246);
	}

	@Test
	void commandStatsGiveTheScriptsExecutionTime() {
		String info = "# Commandstats\r\ncmdstat_evalsha:calls=120,usec=2400,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n"
				+ "cmdstat_eval:calls=3,usec=115\r\ncmdstat_client|setname:calls=2,usec=4\r\ncmdstat_hmget:calls=123,usec=60\r\n";
		Map<String, Long> micros = CommandStats.micros(info);
		assertThat(CommandStats.scriptMicros(micros)).isEqualTo(2515);
		assertThat(micros).containsEntry("client|setname", 4L).containsEntry("hmget", 60L);
		assertThat(CommandStats.scriptMicros(CommandStats.micros("# Commandstats\r\n"))).isZero();
	}

	@Test
	void monitorLineIsSplitIntoItsQuotedWords() {
		List<String> words = ScriptCapture.wordsForTest(
				"1700000000.123456 [0 127.0.0.1:5555] \"EVALSHA\" \"abc\" \"1\" \"rl:{g|k:x}:0\" \"1\" \"tb\"");
		assertThat(words).containsExactly("EVALSHA", "abc", "1", "rl:{g|k:x}:0", "1", "tb");
	}

	@Test
	void closedLoopKeepsTheConcurrencyAndSurvivesSynchronousAnswers() throws Exception {
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		Contender synchronous = new Contender() {
			@Override
			public String name() {
				return "sync";
			}

			@Override
			public void check(int key, Sink sink) {
				most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
				inFlight.decrementAndGet();
				sink.done(key % 2 == 0, "SHARED");
			}
		};
		// long enough for thousands of checks even on a loaded machine, so the allowed share is a real proportion
		LoopResult result = ClosedLoop.run(synchronous, 4, 10, 1_000_000_000L, 100_000);
		assertThat(result.completed.sum()).isGreaterThan(1_000).isLessThanOrEqualTo(100_000);
		assertThat(result.allowedPercent()).isBetween(40.0, 60.0);
		assertThat(most.get()).isLessThanOrEqualTo(4);
		assertThat(result.undecided()).isZero();
	}

	@Test
	void openLoopMeasuresFromTheIntendedTime() throws Exception {
		Contender slow = new Contender() {
			@Override
			public String name() {
				return "slow";
			}

			@Override
			public void check(int key, Sink sink) {
				if (key == 0) {
					sleep(20); // a 20 ms stall of the first check delays the sender: later checks count it too
				}
				sink.done(true, "SHARED");
			}
		};
		OpenLoop.Result result = OpenLoop.run(slow, 100, 1000, 100_000_000L);
		assertThat(result.sent).isEqualTo(100);
		// with coordinated omission only one check would see the stall; from the intended times, about 20 do
		long delayed = result.checks.latency.getCountBetweenValues(1_000_000L, result.checks.latency.getMaxValue());
		assertThat(delayed).isGreaterThanOrEqualTo(10);
	}

	@Test
	void reportAndChartFromResultFiles(@TempDir Path dir) throws Exception {
		Files.writeString(dir.resolve("machine.properties"), "date=2026-01-01 00:00 UTC\nnproc=2\nredis_version=7.0.15\n"
				+ "upstream_jvm_args=-Xms64m -Xmx128m -XX:+UseSerialGC\nupstream_body=" + Upstream.BODY_TEXT + "\n");
		Files.writeString(dir.resolve("ceiling.tsv"),
				"mode\tround\tclients\tpipeline\trequests\trps\tavg_ms\tp50_ms\tp99_ms\n"
						+ "unpipelined\t1\t50\t1\t1000\t40000\t1\t1\t2\npipelined\t1\t50\t16\t1000\t100000\t1\t1\t2\n");
		for (String contender : ReportWriter.CONTENDERS) {
			for (int c : new int[] { 1, 16, 256 }) {
				Tsv.append(dir.resolve("checks.tsv"), BenchmarkMain.CHECK_HEADER, List.of("allowed", c, 1, contender,
						1000 * c, 100, 200, 300, 400, 500, 10, 0, 0, 100, "SHARED=10"));
			}
			Tsv.append(dir.resolve("openloop.tsv"), BenchmarkMain.OPEN_HEADER,
					List.of(contender, 1, 10000, 10000, 100, 200, 300, 400, 500, 50, 25, 10, 0, 0, 100, "SHARED=10"));
		}
		Tsv.append(dir.resolve("hotkey.tsv"), BenchmarkMain.HOT_HEADER,
				List.of("library", "starter", 2000, 8, 16000, 16000, 0, 2, 6, "0.0001", "0.0004", "CACHED=16000"));
		Files.writeString(dir.resolve("e2e.tsv"),
				"route\tround\treq_per_s\tp50_us\tp90_us\tp99_us\trequests\tnon2xx\tsocket_errors\tcpu_us_per_req\toutcomes\tupstream_cpu_us_per_req\n"
						+ "with-filter\t1\t9000\t1\t2\t3\t9\t0\t0\t50\tallowed=9\t12.5\n"
						+ "without-filter\t1\t10000\t1\t2\t3\t9\t0\t0\t40\t-\t12.0\n");
		Path md = dir.resolve("report.md");
		Path png = dir.resolve("chart.png");
		ReportWriter.write(dir, md, png);
		String text = Files.readString(md);
		assertThat(text).contains("## Targets of issue 6").contains("0.90×").contains("**met**");
		// step 4 proxies both routes to the run's upstream, and the report says which one and how it ran
		assertThat(text).contains("the same real upstream")
			.contains("a Reactor Netty")
			.contains("`-Xms64m -Xmx128m -XX:+UseSerialGC`")
			.contains("`" + Upstream.BODY_TEXT + "`")
			.contains("| 12.5 |")
			.doesNotContain("no upstream:");
		// no e2e-mvc.tsv: section 8 and its target say so
		assertThat(text).contains("## 8. End to end through the Server MVC sample gateway\n\nNot measured in this run.\n")
			.contains("| Server MVC gateway req/s with the filter ≥ 0.9 × without | not measured in this run | **not met** |");
		assertThat(Files.size(png)).isGreaterThan(1000);
	}

	@Test
	void serverMvcSectionPerThreadKindFromItsResultFile(@TempDir Path dir) throws Exception {
		Files.writeString(dir.resolve("machine.properties"), """
				nproc=2
				upstream_jvm_args=-Xms64m -Xmx128m -XX:+UseSerialGC
				mvc_platform_java=OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)
				mvc_platform_java_path=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
				mvc_platform_jvm_args=-Xms1g -Xmx1g -Xlog:gc:file=gc-gateway-mvc-platform.log\s
				mvc_platform_threads=start-up log: "Requests are served on platform threads"; 10 threads of Tomcat's pool
				mvc_platform_gc=G1
				mvc_platform_gc_max_pause_ms=3.5
				mvc_virtual_java=OpenJDK Runtime Environment Temurin-25+36 (build 25+36-LTS)
				mvc_virtual_threads=start-up log: "Requests are served on virtual threads"; 2 virtual-thread carriers
				""");
		Files.writeString(dir.resolve("e2e-mvc.tsv"), """
				threads\troute\tround\treq_per_s\tp50_us\tp90_us\tp99_us\trequests\tnon2xx\tsocket_errors\tcpu_us_per_req\toutcomes\tupstream_cpu_us_per_req
				platform\twith-filter\t1\t9500\t100\t200\t400\t95000\t0\t0\t60\tallowed=95000\t12
				platform\twithout-filter\t1\t10000\t90\t180\t300\t100000\t0\t0\t50\t-\t12
				platform\twithout-filter\t2\t10200\t90\t180\t300\t102000\t0\t0\t50\t-\t12
				platform\twith-filter\t2\t9700\t100\t200\t400\t97000\t0\t0\t62\tallowed=97000\t12
				virtual\twith-filter\t1\t8000\t100\t200\t500\t80000\t0\t0\t70\tallowed=80000\t12
				virtual\twithout-filter\t1\t10000\t90\t180\t300\t100000\t0\t0\t50\t-\t12
				""");
		Path md = dir.resolve("report.md");
		ReportWriter.write(dir, md, dir.resolve("chart.png"));
		String text = Files.readString(md);
		String section = text.substring(text.indexOf("## 8. End to end through the Server MVC sample gateway"));
		// one table per thread kind, medians of its own rounds, the filter's price inside that one process
		assertThat(section).contains("### Platform threads (Tomcat's thread pool) on Java 17.0.15+6-Debian-1deb12u1")
			.contains("| `/plain/**` without | 2 | 10,100 | 10,000-10,200 | 90.0 | 180 | 300 | 50.0 | 12.0 | 0.0 | - |")
			.contains("| `/rl/**` with `RateLimit` (key-by ip) | 2 | 9,600 | 9,500-9,700 | 100 | 200 | 400 | 61.0 | 12.0 | 0.0 | `allowed=97000` |")
			.contains("With the filter: **0.95×** the requests per second of the same route without it; p99 added: **100 µs**, p50 added: 10.0 µs.")
			.contains("**11.0 µs of CPU per request** (61.0 against 50.0 µs;")
			.contains("### Virtual threads on Java 25+36-LTS")
			.contains("With the filter: **0.80×**")
			.contains("Requests ran on virtual threads: start-up log: \"Requests are served on virtual threads\"")
			.contains("gateway JVM: `-Xms1g -Xmx1g -Xlog:gc:file=gc-gateway-mvc-platform.log` (GC G1, longest pause 3.5 ms)")
			// only step 8 ran: no versions.properties, so no version of the upstream's Reactor Netty to name
			.contains("a Reactor Netty HTTP/1.1 server");
		// section 4's rule for each thread kind: one below 0.9 and the target is not met
		assertThat(text).contains("| Server MVC gateway req/s with the filter ≥ 0.9 × without | platform threads (Java "
				+ "17.0.15+6-Debian-1deb12u1): 9,600 vs 10,100 req/s = **0.95×**; p99 400 vs 300 µs (+100 µs); virtual "
				+ "threads (Java 25+36-LTS): 8,000 vs 10,000 req/s = **0.80×**; p99 500 vs 300 µs (+200 µs) | **not met** |");
		// the WebFlux sample's section 4 is not this file's
		assertThat(text).contains("## 4. End to end through the sample gateway\n\nNot measured in this run.");
	}

	@Test
	void serverMvcSectionSaysWhyVirtualThreadsWereNotMeasured(@TempDir Path dir) throws Exception {
		Files.writeString(dir.resolve("machine.properties"),
				"mvc_virtual_note=no Java 21 or newer: MVC_JAVA is unset\n");
		Files.writeString(dir.resolve("e2e-mvc.tsv"), """
				threads\troute\tround\treq_per_s\tp50_us\tp90_us\tp99_us\trequests\tnon2xx\tsocket_errors\tcpu_us_per_req\toutcomes\tupstream_cpu_us_per_req
				platform\twith-filter\t1\t9500\t100\t200\t400\t95000\t0\t0\t60\tallowed=95000\t12
				platform\twithout-filter\t1\t10000\t90\t180\t300\t100000\t0\t0\t50\t-\t12
				""");
		Path md = dir.resolve("report.md");
		ReportWriter.write(dir, md, dir.resolve("chart.png"));
		String text = Files.readString(md);
		assertThat(text).contains("### Virtual threads\n\nNot measured in this run: no Java 21 or newer: MVC_JAVA is unset.")
			.containsPattern("\\| Server MVC gateway req/s .* = \\*\\*0\\.95×\\*\\*; p99 400 vs 300 µs \\(\\+100 µs\\) \\| \\*\\*met\\*\\* \\|");
	}

	@Test
	void upstreamAnswersEveryRequestWithItsFixedBodyAndKeepsTheConnection() throws Exception {
		try (Upstream upstream = Upstream.start("127.0.0.1", 0, 1)) {
			HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
			for (String path : List.of("/rl/x", "/plain/x?y=1", "/")) {
				HttpResponse<String> response = client.send(
						HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstream.port() + path)).build(),
						HttpResponse.BodyHandlers.ofString());
				assertThat(response.statusCode()).isEqualTo(200);
				assertThat(response.body()).isEqualTo(Upstream.BODY_TEXT);
				assertThat(response.headers().firstValue("content-length"))
					.hasValue(String.valueOf(Upstream.BODY_TEXT.length()));
				assertThat(response.headers().firstValue("connection")).isNotEqualTo(Optional.of("close"));
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
