package io.github.ratelimit.accuracy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.limits.Algorithm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A short run of the harness (the real one is {@code src/benchmarks/accuracy}, 60 s per algorithm): three clients in
 * one JVM for 1.5 s against a redis-server it starts. Whatever the machine's load does to the traffic, the shared
 * limiter must admit exactly what one exact limiter admits for the same arrivals, and the sliding log never more
 * than its capacity in any window.
 */
class AccuracyRunTest {

	@Test
	void distributedRunAdmitsExactlyWhatOneExactLimiterAdmits() throws Exception {
		AccuracyRun.Options options = new AccuracyRun.Options(3, 5, Duration.ofMillis(1500), 20,
				Duration.ofMillis(100), List.of(Algorithm.TOKEN_BUCKET, Algorithm.SLIDING_WINDOW_LOG),
				AccuracyRun.Mode.CLIENTS, null, Path.of("target"), 1);
		List<AccuracyAnalysis> runs = AccuracyRun.run(options);
		assertThat(runs).hasSize(2);
		for (AccuracyAnalysis run : runs) {
			assertThat(run.errors()).isZero();
			assertThat(run.sent()).isGreaterThan(1_000);
			assertThat(run.admitted()).as("%s", run).isEqualTo(run.reference());
			assertThat(run.admitted()).isLessThanOrEqualTo((int) Math.floor(run.theory() + 1e-9));
			assertThat(run.maxInWindow()).isLessThanOrEqualTo((int) run.windowLimit());
		}
		String report = AccuracyRun.report(options, runs, "--duration 1.5s");
		assertThat(report).contains("| token-bucket | ").contains("| sliding-window-log | ")
			.contains("src/benchmarks/accuracy --duration 1.5s");
	}

	@Test
	void withLeasesTheInstancesNeverAdmitAboveTheBound() throws Exception {
		// 25% of 20: leases of up to 5 tokens; whatever the load, no interval may admit above capacity + rate × length
		AccuracyRun.Options options = new AccuracyRun.Options(3, 5, Duration.ofMillis(1500), 20,
				Duration.ofMillis(100), List.of(Algorithm.TOKEN_BUCKET), AccuracyRun.Mode.CLIENTS, null,
				Path.of("target"), 1, List.of(25.0), Duration.ofMillis(500));
		List<AccuracyAnalysis> runs = AccuracyRun.run(options);
		assertThat(runs).singleElement().satisfies((run) -> {
			assertThat(run.label()).isEqualTo("token-bucket, lease 25% for 500ms");
			assertThat(run.errors()).isZero();
			assertThat(run.admitted()).as("%s", run).isLessThanOrEqualTo((int) run.bound());
			assertThat(run.upperBound().holds()).as("%s", run).isTrue();
			assertThat(run.redisCalls()).isPositive();
		});
		assertThat(AccuracyRun.boundViolations(runs)).isEmpty();
	}

	@Test
	void referenceLimiterKnowsEachAlgorithm() {
		long[] burst = new long[300];
		for (int i = 0; i < burst.length; i++) {
			burst[i] = 1_000_000_000L + i * 1_000L; // one check per ms for 0.3 s
		}
		Plan plan = new Plan(Algorithm.SLIDING_WINDOW_LOG, 20, Duration.ofMillis(100));
		assertThat(ReferenceLimiter.admitted(plan, burst)).isEqualTo(60);
		assertThat(ReferenceLimiter.admitted(new Plan(Algorithm.FIXED_WINDOW, 20, Duration.ofMillis(100)), burst))
			.isEqualTo(60);
		// token bucket: 20 at once, then 1 per 5 ms for 299 ms
		assertThat(ReferenceLimiter.admitted(new Plan(Algorithm.TOKEN_BUCKET, 20, Duration.ofMillis(100)), burst))
			.isEqualTo(20 + 59);
		assertThat(AccuracyAnalysis.maxInWindow(new long[] { 0, 10, 99, 100, 150 }, 100)).isEqualTo(3);
	}

}
