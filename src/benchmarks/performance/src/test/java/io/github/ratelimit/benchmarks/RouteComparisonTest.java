package io.github.ratelimit.benchmarks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.ClientRequest;
import io.github.ratelimit.gateway.client.DefaultClientKeyResolver;
import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.plan.StaticPlanResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The pure parts of the route comparison (issue 14): no gateway, no Redis, no wrk, no timing. */
class RouteComparisonTest {

	private static final String WRK = """
			Running 10s test @ http://127.0.0.1:8080/rl/x
			  1 threads and 32 connections
			  Thread Stats   Avg      Stdev     Max   +/- Stdev
			    Latency     1.21ms  612.00us  25.03ms   91.00%
			    Req/Sec    26.90k     1.10k   28.10k    80.00%
			  Latency Distribution
			     50%  612.00us
			     75%    1.00ms
			     90%    1.50ms
			     99%    1.01s
			  267650 requests in 10.00s, 20.16MB read
			  Socket errors: connect 0, read 2, write 1, timeout 4
			  Non-2xx or 3xx responses: 17
			Requests/sec:  26765.43
			Transfer/sec:      2.02MB
			""";

	@Test
	void wrkOutputGivesThroughputPercentilesInMicrosecondsAndErrors() {
		WrkResult r = WrkResult.parse(WRK);
		assertThat(r.requestsPerSecond()).isEqualTo(26765.43);
		assertThat(r.p50Micros()).isEqualTo(612.0);
		assertThat(r.p90Micros()).isEqualTo(1500.0);
		assertThat(r.p99Micros()).isEqualTo(1_010_000.0);
		assertThat(r.requests()).isEqualTo(267650);
		assertThat(r.non2xx()).isEqualTo(17);
		assertThat(r.allowed()).isEqualTo(267633);
		assertThat(r.socketErrors()).isEqualTo(7);
	}

	@Test
	void wrkOutputWithoutErrorLinesHasNone() {
		WrkResult r = WrkResult.parse(WRK.replaceAll("(?m)^.*(Socket errors|Non-2xx).*\\n", ""));
		assertThat(r.non2xx()).isZero();
		assertThat(r.socketErrors()).isZero();
		assertThat(WrkResult.micros("2.00m")).isEqualTo(120_000_000.0);
		assertThatIllegalArgumentException().isThrownBy(() -> WrkResult.parse("wrk: connection refused"));
	}

	@Test
	void zipfTableIsTheNormalisedHarmonicSeries() {
		double[] cdf = ZipfTable.cdf(4, 1.0);
		double h = 1 + 1 / 2.0 + 1 / 3.0 + 1 / 4.0;
		assertThat(cdf[0]).isCloseTo(1 / h, within(1e-12));
		assertThat(cdf[1]).isCloseTo((1 + 1 / 2.0) / h, within(1e-12));
		assertThat(cdf[3]).isEqualTo(1.0);
		// s = 0 is the uniform law
		assertThat(ZipfTable.cdf(4, 0)).containsExactly(0.25, 0.5, 0.75, 1.0);
	}

	@Test
	void zipfOver200000KeysGivesTheHottestKeyAboutOneThirteenth() {
		double[] cdf = ZipfTable.cdf(200_000, 1.0);
		for (int k = 1; k < cdf.length; k++) {
			assertThat(cdf[k]).isGreaterThan(cdf[k - 1]);
		}
		// H(200,000) = ln(200,000) + 0.5772... = 12.78
		assertThat(ZipfTable.topShare(cdf, 1)).isCloseTo(1 / 12.782, within(1e-4));
		assertThat(ZipfTable.topShare(cdf, 2_000)).isBetween(0.6, 0.7);
	}

	@Test
	void drawFindsTheFirstRankWhoseCumulativeShareExceedsTheNumber() {
		double[] cdf = { 0.5, 0.75, 1.0 };
		assertThat(ZipfTable.draw(cdf, 0.0)).isZero();
		assertThat(ZipfTable.draw(cdf, 0.4999)).isZero();
		assertThat(ZipfTable.draw(cdf, 0.5)).isEqualTo(1);
		assertThat(ZipfTable.draw(cdf, 0.8)).isEqualTo(2);
		assertThat(ZipfTable.draw(cdf, 0.999999)).isEqualTo(2);
	}

	@Test
	void zipfTableFileHasOneProbabilityPerLine(@TempDir Path dir) throws Exception {
		Path file = dir.resolve("cdf.txt");
		ZipfTable.write(file, 1000, 1.0);
		List<String> lines = Files.readAllLines(file);
		assertThat(lines).hasSize(1000);
		assertThat(Double.parseDouble(lines.get(0))).isCloseTo(ZipfTable.cdf(1000, 1.0)[0], within(1e-11));
		assertThat(Double.parseDouble(lines.get(999))).isEqualTo(1.0);
	}

	@Test
	void routeOrderRotatesEachRound() {
		List<String> routes = List.of("plain", "rl", "scg");
		assertThat(RouteComparison.rotate(routes, 1)).containsExactly("plain", "rl", "scg");
		assertThat(RouteComparison.rotate(routes, 2)).containsExactly("rl", "scg", "plain");
		assertThat(RouteComparison.rotate(routes, 4)).containsExactly("plain", "rl", "scg");
	}

	@Test
	void zipfMeasurementLeavesGatewaysLimiterOut() {
		List<RouteComparison.Measurement> m = RouteComparison.measurements(BenchGateway.routes(true));
		assertThat(m).extracting(RouteComparison.Measurement::name)
			.containsExactly("uniform-c32", "uniform-c4", "zipf-c32");
		assertThat(m.get(0).routes()).containsExactly("plain", "rl", "rl-lease", "scg");
		assertThat(m.get(1).connections()).isEqualTo(4);
		assertThat(m.get(2).routes()).containsExactly("plain", "rl", "rl-lease");
		assertThat(m.get(2).keys()).isEqualTo(200_000);
	}

	@Test
	void callsPerAllowedRequest() {
		assertThat(RouteComparison.perAllowed(150, 1000)).isEqualTo("0.1500");
		assertThat(RouteComparison.perAllowed(5, 0)).isEqualTo("NaN");
	}

	@Test
	void procStatTicksSkipACommandNameWithSpacesAndParentheses() {
		String stat = "4242 (C2 CompilerThre (x)) S 1 4242 4242 0 -1 4194560 2450 0 0 0 123 45 0 0 20 0 30 0 999";
		assertThat(ProcessCounters.cpuTicks(stat)).isEqualTo(168);
	}

	@Test
	void threadStatusGivesVoluntaryPlusNonvoluntaryContextSwitches() {
		String status = """
				Name:	reactor-http-ep
				State:	S (sleeping)
				Tgid:	4242
				Pid:	4250
				Cpus_allowed_list:	0-1
				voluntary_ctxt_switches:	1200
				nonvoluntary_ctxt_switches:	34
				""";
		assertThat(ProcessCounters.contextSwitches(status)).isEqualTo(1234);
		assertThatIllegalArgumentException().isThrownBy(() -> ProcessCounters.contextSwitches("Name:\tx\n"));
	}

	@Test
	void contextSwitchesSinceCountThreadsAliveAtTheEndAndNotThoseThatEnded() {
		// thread 2 ended in between (its switches are lost), thread 3 started (counted in full)
		ProcessCounters before = new ProcessCounters(100, Map.of(1L, 1000L, 2L, 5000L));
		ProcessCounters after = new ProcessCounters(160, Map.of(1L, 1300L, 3L, 40L));
		assertThat(after.cpuTicksSince(before)).isEqualTo(60);
		assertThat(after.contextSwitchesSince(before)).isEqualTo(340);
	}

	@Test
	void procStatOfTheMachineGivesNonIdleTicksOfAllCoresAndContextSwitches() {
		String stat = """
				cpu  13154 7 4054 47516 304 5 86 86 2 0
				cpu0 6599 7 1575 24291 35 5 12 38 1 0
				cpu1 6555 0 2478 23225 269 0 73 48 1 0
				intr 912345 0 9 0
				ctxt 910347
				btime 1764873600
				processes 4321
				""";
		MachineCounters counters = MachineCounters.parse(stat);
		// user + nice + system + irq + softirq + steal; idle, iowait and guest (already in user) left out
		assertThat(counters.busyTicks()).isEqualTo(13154 + 7 + 4054 + 5 + 86 + 86);
		assertThat(counters.contextSwitches()).isEqualTo(910347);
		MachineCounters later = new MachineCounters(counters.busyTicks() + 150, counters.contextSwitches() + 9000);
		assertThat(later.busyTicksSince(counters)).isEqualTo(150);
		assertThat(later.contextSwitchesSince(counters)).isEqualTo(9000);
		assertThatIllegalArgumentException().isThrownBy(() -> MachineCounters.parse("intr 1\n"));
	}

	@Test
	void countersOfThisProcessAndThisMachineFromProc() throws Exception {
		assumeTrue(Files.isReadable(Path.of("/proc/stat")), "Linux /proc");
		ProcessCounters self = ProcessCounters.read(ProcessHandle.current().pid());
		assertThat(self.contextSwitchesByTask()).isNotEmpty();
		assertThat(MachineCounters.read().busyTicks()).isPositive();
	}

	@Test
	void censusCountsBucketsByApiKeyAndByIp() {
		assertThat(RouteComparison.BucketCensus.scriptKey(
				"1700000000.1 [0 127.0.0.1:5555] \"EVALSHA\" \"abc\" \"1\" \"rl:{bench|k:AbC}:0\" \"check\" \"1\""))
			.isEqualTo("rl:{bench|k:AbC}:0");
		assertThat(RouteComparison.BucketCensus
			.scriptKey("1700000000.1 [0 lua] \"HMGET\" \"rl:{bench|k:AbC}:0\" \"t\""))
			.isNull();
		RouteComparison.BucketCensus census = RouteComparison.BucketCensus.of(Set.of("rl:{bench|k:a}:0",
				"rl:{bench|k:b}:0", "rl:{bench|ip:127.0.0.1}:0", "request_rate_limiter.{scg.k}.tokens"));
		assertThat(census.distinct()).isEqualTo(4);
		assertThat(census.apiKeyBuckets()).isEqualTo(3);
		assertThat(census.ipBuckets()).isEqualTo(1);
	}

	@Test
	void leaseRouteOnlyWhenTheStarterHasLeasesOrAsDemanded() {
		assertThat(BenchGateway.leasesWanted(null, false)).isFalse();
		assertThat(BenchGateway.leasesWanted(null, true)).isTrue();
		assertThat(BenchGateway.leasesWanted("0", true)).isFalse();
		assertThat(BenchGateway.leasesWanted("1", true)).isTrue();
		assertThatIllegalStateException().isThrownBy(() -> BenchGateway.leasesWanted("1", false))
			.withMessageContaining("lease");
		assertThat(BenchGateway.routes(false)).containsExactly("plain", "rl", "scg");
	}

	@Test
	void everyApiKeyIsAClientOfItsOwnWhereAnUnknownKeyWouldFallBackToTheAddress() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/rl/x")
			.header(BenchGateway.API_KEY_HEADER, "bench-key-000042")
			.remoteAddress(new InetSocketAddress("10.1.2.3", 40000)));
		ClientAddressResolver addresses = new ClientAddressResolver(0);
		ClientKey known = new DefaultClientKeyResolver(BenchGateway.API_KEY_HEADER, "anonymous",
				new BenchGateway.EveryKeyPlanResolver(BenchGateway.PLAN), addresses)
			.resolve(request(exchange), KeyBy.API_KEY)
			.toCompletableFuture()
			.join()
			.client();
		assertThat(known.kind()).isEqualTo(ClientKey.Kind.API_KEY);
		assertThat(known.plan()).isEqualTo(BenchGateway.PLAN);
		assertThat(known.id()).isEqualTo(ApiKeyHasher.hash("bench-key-000042"));
		// the starter's default resolver, with no ratelimit.api-keys: the key is unknown, the client is its address
		ClientKey unknown = new DefaultClientKeyResolver(BenchGateway.API_KEY_HEADER, "anonymous",
				new StaticPlanResolver(Map.of()), addresses)
			.resolve(request(exchange), KeyBy.API_KEY)
			.toCompletableFuture()
			.join()
			.client();
		assertThat(unknown.kind()).isEqualTo(ClientKey.Kind.IP);
		assertThat(unknown.plan()).isEqualTo("anonymous");
	}

	/** The request as the WebFlux front end hands it to the client key resolver (no principal). */
	private static ClientRequest request(MockServerWebExchange exchange) {
		return new ClientRequest() {

			@Override
			public List<String> headerValues(String name) {
				return exchange.getRequest().getHeaders().getOrEmpty(name);
			}

			@Override
			public InetAddress remoteAddress() {
				return exchange.getRequest().getRemoteAddress().getAddress();
			}

			@Override
			public Principal principal() {
				return null;
			}

		};
	}

	@Test
	void gatewayPropertiesConfigureEveryRouteAndTheLeaseLimitOnlyWithLeases() {
		Map<String, Object> without = BenchGateway.properties(0, "127.0.0.1", 6379, false);
		String routes = "spring.cloud.gateway.server.webflux.routes";
		assertThat(without).containsEntry(routes + "[0].id", "plain")
			.containsEntry(routes + "[0].uri", "no://op")
			.containsEntry(routes + "[1].filters[0].name", "RateLimit")
			.containsEntry(routes + "[1].filters[0].args.key-by", "api-key")
			.containsEntry(routes + "[2].id", "scg")
			.containsEntry(routes + "[2].filters[0].name", "RequestRateLimiter")
			.containsEntry(routes + "[2].filters[0].args[key-resolver]", "#{@apiKeyResolver}")
			.containsEntry("ratelimit.plans.bench.groups.bench[0].capacity", 1_000_000L);
		assertThat(without.keySet()).noneMatch((key) -> key.contains("lease"));
		Map<String, Object> with = BenchGateway.properties(0, "127.0.0.1", 6379, true);
		assertThat(with).containsEntry(routes + "[2].id", "rl-lease")
			.containsEntry("ratelimit.plans.bench.groups.bench-lease[0].lease", "2%");
	}

	@Test
	void reportSectionWithTargetsFromResultFiles(@TempDir Path dir) throws Exception {
		for (int round = 1; round <= 3; round++) {
			row(dir, "uniform-c32", round, "plain", 30000 + round, 600, 0, 0);
			row(dir, "uniform-c32", round, "rl", 20000, 900, 10000, 50000);
			row(dir, "uniform-c32", round, "scg", 8000, 2000, 4000, 24000);
			row(dir, "uniform-c4", round, "plain", 25000, 700, 0, 0);
			row(dir, "uniform-c4", round, "rl", 12000, 1100, 6000, 30000);
			row(dir, "uniform-c4", round, "scg", 5000, 4000, 2500, 15000);
			row(dir, "zipf-c32", round, "plain", 30000, 600, 0, 0);
			row(dir, "zipf-c32", round, "rl", 18000, 900, 9000, 45000);
		}
		Tsv.append(dir.resolve("routes-memory.tsv"), RouteComparison.MEMORY_HEADER,
				List.of("idle", 200000, 200000, 0, 1000000, 30000000, "145", 120, 860000, "rl:{idle|k:x}:0"));
		Files.writeString(dir.resolve("routes-gateway.properties"), "leases=false\nstarter_has_leases=false\n");
		StringBuilder md = new StringBuilder();
		new RouteComparisonReport(dir, new java.util.Properties()).section(md);
		String text = md.toString();
		assertThat(text).contains("### Issue 29 targets")
			// 20,000 / 30,002 (median of 30,001..30,003)
			.contains("= **0.67×** | **met**")
			.contains("20,000 vs 8,000 req/s = **2.50×** | **met**")
			.contains("**+400 µs** | **not met**") // over the 0.3 ms of issue 29
			.contains("**145 B**")
			.contains("not measured (without leases: 0.60×)")
			.contains("rl:{idle\\|k:x}:0")
			// gateway 40, Redis 10 µs CPU per request (of it 6.5 executing scripts, 5.2 per call), machine 120;
			// context switches 0.25, 0.5, 3
			.contains("| 40.0 | 10.0 | 6.5 | 5.2 | 120 | 0.25 | 0.50 | 3.00 |")
			.contains("`usec` of EVALSHA + EVAL")
			.contains("`ctxt` of `/proc/stat`")
			// ratios: the filter adds no gateway, Redis, script or machine CPU in these rows
			.contains("| +0.0 | +0.0 | +0.0 | +0.0 |")
			.contains("### Where the gateway's time goes (JFR)\n\nNot recorded in this run.")
			.contains("no per-limit `lease` property yet");
	}

	private static void row(Path dir, String measurement, int round, String route, double rps, double p99,
			long scriptCalls, long allCalls) throws Exception {
		long requests = (long) rps * 10;
		Tsv.append(dir.resolve("routes.tsv"), RouteComparison.HEADER,
				List.of(measurement, round, route, measurement.startsWith("zipf") ? "zipf" : "uniform", 10000, 32, 10,
						rps, 100, 200, p99, requests, 0, 0, 40, scriptCalls, allCalls,
						RouteComparison.perAllowed(scriptCalls, requests), RouteComparison.perAllowed(allCalls, requests),
						10, 120, RouteComparison.perRequest(requests / 4, requests),
						RouteComparison.perRequest(requests / 2, requests), 3, 6.5, 5.2));
	}

	@Test
	void profileSectionGivesMicrosPerRequestByLeafGroupAndStarterFrame(@TempDir Path dir) throws Exception {
		for (int round = 1; round <= 3; round++) {
			row(dir, "uniform-c32", round, "plain", 30000, 600, 0, 0);
			row(dir, "uniform-c32", round, "rl", 20000, 900, 10000, 50000);
		}
		// /rl: 1,000 samples at 40 µs CPU per request; /plain: 2,000 samples at 25 µs
		Tsv.append(dir.resolve("routes-profile.tsv"), GatewayProfile.WINDOW_HEADER,
				List.of("rl", "uniform", 10000, 32, 20, "20000", "900", 400000, 0, "40.0", 160, 1000, 300,
						"routes-profile-rl.jfr"));
		Tsv.append(dir.resolve("routes-profile.tsv"), GatewayProfile.WINDOW_HEADER, List.of("plain", "uniform", 10000, 32,
				20, "30000", "600", 600000, 0, "25.0", 0, 2000, 0, "routes-profile-plain.jfr"));
		Path groups = dir.resolve("routes-profile-groups.tsv");
		Tsv.append(groups, GatewayProfile.GROUP_HEADER, List.of("rl", "reactor.*", 500));
		Tsv.append(groups, GatewayProfile.GROUP_HEADER, List.of("rl", "io.github.ratelimit.*", 250));
		Tsv.append(groups, GatewayProfile.GROUP_HEADER, List.of("rl", "java.*", 250));
		Tsv.append(groups, GatewayProfile.GROUP_HEADER, List.of("plain", "reactor.*", 1200));
		Tsv.append(groups, GatewayProfile.GROUP_HEADER, List.of("plain", "java.*", 800));
		Path frames = dir.resolve("routes-profile-frames.tsv");
		Tsv.append(frames, GatewayProfile.FRAME_HEADER, List.of("rl", "io.github.ratelimit.gateway.a.B.c", 200));
		Tsv.append(frames, GatewayProfile.FRAME_HEADER, List.of("rl", "io.github.ratelimit.gateway.a.B$$Lambda.accept", 100));
		java.util.Properties machine = new java.util.Properties();
		machine.setProperty("routes_gateway_jvm_args", "-Xms1g -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints");
		StringBuilder md = new StringBuilder();
		new RouteComparisonReport(dir, machine).section(md);
		String text = md.toString();
		assertThat(text).contains("### Where the gateway's time goes (JFR)")
			.contains("`wrk -t1 -c32 -d20s` window (uniform over 10,000 keys")
			.contains("runs with `-XX:+DebugNonSafepoints`")
			// the window, and the rounds' median beside it
			// 160 ms of the 16 s of CPU (40 µs × 400,000) in the JIT compiler
			.contains("| `/rl` `RateLimit` (key-by api-key) | 20,000 | 900 | 40.0 | 40.0 | 1.0% | 1,000 | 300 |")
			// 25% of 40 µs; nothing on /plain; the largest difference first
			.contains("| group | /rl samples |")
			.contains("| io.github.ratelimit.* | 250 | 25.0% | 10.00 | 0 | 0.0% | 0.00 | +10.00 |\n"
					+ "| reactor.* | 500 | 50.0% | 20.00 | 1200 | 60.0% | 15.00 | +5.00 |\n"
					+ "| java.* | 250 | 25.0% | 10.00 | 800 | 40.0% | 10.00 | +0.00 |\n"
					+ "| total | 1000 | 100.0% | 40.00 | 2000 | 100.0% | 25.00 | +15.00 |")
			.contains("300 of the 1,000 samples (30.0%, 12.00 µs/request)")
			.contains("| `io.github.ratelimit.gateway.a.B.c` | 200 | 20.0% | 8.00 |\n"
					+ "| `io.github.ratelimit.gateway.a.B$$Lambda.accept` | 100 | 10.0% | 4.00 |");
	}

	@Test
	void profileSectionSaysWhyNothingWasRecorded(@TempDir Path dir) throws Exception {
		row(dir, "uniform-c32", 1, "rl", 20000, 900, 10000, 50000);
		Files.writeString(dir.resolve("routes-profile-error.txt"), "java.lang.IllegalStateException: jcmd failed");
		StringBuilder md = new StringBuilder();
		new RouteComparisonReport(dir, new java.util.Properties()).section(md);
		assertThat(md.toString()).contains("Not recorded in this run: `java.lang.IllegalStateException: jcmd failed`.");
	}

	@Test
	void leafGroupsAndStarterFramesOfTheProfile() {
		assertThat(GatewayProfile.group("reactor.core.publisher.MonoDefer")).isEqualTo("reactor.*");
		assertThat(GatewayProfile.group("org.springframework.cloud.gateway.handler.AsyncPredicate"))
			.isEqualTo("org.springframework.cloud.gateway.*");
		assertThat(GatewayProfile.group("org.springframework.core.OrderComparator")).isEqualTo("org.springframework.*");
		assertThat(GatewayProfile.group("io.github.ratelimit.gateway.webflux.Outcomes"))
			.isEqualTo("io.github.ratelimit.*");
		assertThat(GatewayProfile.group("io.github.ratelimit.benchmarks.BenchGateway$EveryKeyPlanResolver"))
			.startsWith("io.github.ratelimit.benchmarks.*");
		assertThat(GatewayProfile.group("com.example.X")).isEqualTo(GatewayProfile.OTHER);
		assertThat(GatewayProfile.group("")).isEqualTo(GatewayProfile.OTHER);
		assertThat(GatewayProfile.isStarter("io.github.ratelimit.gateway.redis.LoopTurnBatch")).isTrue();
		assertThat(GatewayProfile.isStarter("io.github.ratelimit.benchmarks.BenchGateway")).isFalse();
		assertThat(GatewayProfile.methodName(
				"io.github.ratelimit.gateway.route.RateLimitOutcome$$Lambda$1516+0x00007fe100742ae0.1356618853", "accept"))
			.isEqualTo("io.github.ratelimit.gateway.route.RateLimitOutcome$$Lambda.accept");
		assertThat(GatewayProfile.methodName("io.github.ratelimit.gateway.webflux.Outcomes", "lambda$toMono$1"))
			.isEqualTo("io.github.ratelimit.gateway.webflux.Outcomes.lambda$toMono$1");
		assertThat(RouteComparison.jfrSettings(5)).contains("<event name=\"jdk.ExecutionSample\">")
			.contains("<setting name=\"period\">5 ms</setting>");
	}

}
