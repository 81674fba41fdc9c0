package io.github.ratelimit.accuracy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.accuracy.SoakSampler.GatewaySample;
import io.github.ratelimit.accuracy.SoakSampler.GcSample;
import io.github.ratelimit.accuracy.SoakSampler.Sample;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The soak's verdicts on made-up clients and samples (the soak itself runs by src/benchmarks/soak only). */
class SoakAnalysisTest {

	private static final long START = 1_000_000_000_000L;

	private static final long SECOND = 1_000_000;

	/** Capacity 2, 1 token per second, 2 minutes, one gateway. */
	private static SoakRun.Options options() {
		return SoakRun.Options.parse(new String[] { "--minutes", "2", "--capacity", "2", "--refill-tokens", "1",
				"--refill-period", "1s", "--clients", "1", "--gateway", "gateway-1,1,2,3" });
	}

	/** A client sending one request per second for {@code seconds}; the answers from {@code status}. */
	private static SoakClient client(int id, long fromSecond, int seconds, int status, boolean shared) {
		SoakClient client = new SoakClient(id, SoakLoad.address(id), START + fromSecond * SECOND,
				START + (fromSecond + seconds) * SECOND, false);
		for (int i = 0; i < seconds; i++) {
			long sent = START + (fromSecond + i) * SECOND;
			client.record(new SoakClient.Response(sent, sent + 1_000, status, 0, shared));
		}
		return client;
	}

	private static Sample sample(long second, long dbsize) {
		GatewaySample gateway = new GatewaySample(40, 100, 0, 0, Map.of(), 0);
		return new Sample(START + second * SECOND, START + second * SECOND + 100, List.of(gateway), dbsize, 0, 0);
	}

	private static SoakAnalysis analysis(List<SoakClient> clients, List<Sample> samples, List<GcSample> gc) {
		return new SoakAnalysis(options(), START, START + 120 * SECOND, clients, samples, gc, 1, 1);
	}

	@Test
	void oneTokenPerSecondIsWithinTheBound() {
		SoakAnalysis a = analysis(List.of(client(0, 0, 100, 200, true)), List.of(), List.of());
		List<SoakAnalysis.Minute> rows = a.perMinute();
		assertThat(rows).hasSize(2);
		assertThat(rows.get(0).violations).isZero();
		assertThat(rows.get(0).admitted).isEqualTo(60);
		assertThat(rows.get(0).exact).isEqualTo(60);
	}

	@Test
	void tenAdmittedWithinASecondIsOverTheBoundInThatMinute() {
		SoakClient burst = new SoakClient(0, SoakLoad.address(0), START + 70 * SECOND, START + 71 * SECOND, false);
		for (int i = 0; i < 10; i++) {
			long sent = START + 70 * SECOND + i * 10_000L;
			burst.record(new SoakClient.Response(sent, sent + 1_000, 200, 0, true));
		}
		List<SoakAnalysis.Minute> rows = analysis(List.of(burst), List.of(), List.of()).perMinute();
		assertThat(rows.get(0).violations).isZero();
		assertThat(rows.get(1).violations).isEqualTo(1);
		assertThat(rows.get(1).exact).isEqualTo(2);
	}

	@Test
	void admissionsOfTheLocalFallbackAreCountedApartAndNotHeldToTheBound() {
		SoakClient client = new SoakClient(0, SoakLoad.address(0), START, START + SECOND, false);
		for (int i = 0; i < 10; i++) {
			client.record(new SoakClient.Response(START + i, START + i + 1_000, 200, 0, false));
		}
		SoakAnalysis.Minute first = analysis(List.of(client), List.of(), List.of()).perMinute().get(0);
		assertThat(first.violations).isZero();
		assertThat(first.admitted).isEqualTo(10);
		assertThat(first.fallbackAdmitted).isEqualTo(10);
	}

	@Test
	void keysOfAClientCountUntilItsTtlAndTheSlackHaveRunOut() {
		// capacity 2 at 1 token/s: a key lives 2 s after its last write; slack 2 s
		SoakAnalysis a = analysis(List.of(client(0, 0, 10, 200, true)), List.of(), List.of());
		assertThat(a.keyBound(sample(5, 0))).isEqualTo(2);
		assertThat(a.keyBound(sample(12, 0))).isEqualTo(2);
		assertThat(a.keyBound(sample(14, 0))).isEqualTo(1);
	}

	@Test
	void aClientWithAnUnansweredRequestCountsToTheEnd() {
		SoakClient client = client(0, 0, 10, 200, true);
		client.record(new SoakClient.Response(START + 10 * SECOND, START + 70 * SECOND, SoakLoad.NO_ANSWER, 0, false));
		SoakAnalysis a = analysis(List.of(client), List.of(), List.of());
		assertThat(a.keyBound(sample(100, 0))).isEqualTo(2);
		assertThat(verdict(a, "every request answered").holds()).isFalse();
		assertThat(verdict(a, "zero 5xx").holds()).isTrue();
	}

	@Test
	void fallingFileDescriptorsAreNotALeakGrowingOnesAre() {
		List<Sample> falling = new java.util.ArrayList<>();
		List<Sample> growing = new java.util.ArrayList<>();
		for (int i = 0; i < 12; i++) {
			falling.add(new Sample(START + i * 10 * SECOND, START + i * 10 * SECOND, List.of(new GatewaySample(40,
					(i == 8) ? 50 : 200, 0, 0, Map.of(), 0)), 1, 0, 0));
			growing.add(new Sample(START + i * 10 * SECOND, START + i * 10 * SECOND,
					List.of(new GatewaySample(40, 200 + 10 * i, 0, 0, Map.of(), 0)), 1, 0, 0));
		}
		assertThat(verdict(analysis(List.of(), falling, List.of()), "file descriptors").holds()).isTrue();
		assertThat(verdict(analysis(List.of(), growing, List.of()), "file descriptors").holds()).isFalse();
	}

	@Test
	void aKeyCountAboveTheBoundFailsTheKeyVerdict() {
		List<SoakClient> clients = List.of(client(0, 0, 100, 200, true));
		SoakAnalysis within = analysis(clients, List.of(sample(30, 2)), List.of());
		SoakAnalysis above = analysis(clients, List.of(sample(30, 3)), List.of());
		assertThat(verdict(within, "Redis keys").holds()).isTrue();
		assertThat(verdict(above, "Redis keys").holds()).isFalse();
	}

	@Test
	void aGrowingHeapAfterGcFailsAndAFlatOneHolds() {
		List<GcSample> flat = new java.util.ArrayList<>();
		List<GcSample> growing = new java.util.ArrayList<>();
		for (int i = 0; i < 12; i++) {
			long at = START + i * 10 * SECOND;
			flat.add(new GcSample(at, 0, 30e6 + ((i % 2 == 0) ? 100_000 : -100_000)));
			growing.add(new GcSample(at, 0, 30e6 + i * 100_000)); // 0.1 MB per 10 s = 36 MB/h
		}
		assertThat(analysis(List.of(), List.of(), flat).heapSlopeMbPerHour(0)).isBetween(-5.0, 5.0);
		assertThat(verdict(analysis(List.of(), List.of(), growing), "heap").holds()).isFalse();
		assertThat(analysis(List.of(), List.of(), growing).heapSlopeMbPerHour(0)).isCloseTo(36.0,
				org.assertj.core.data.Offset.offset(0.01));
	}

	@Test
	void theChartIsNamedAfterTheReport() {
		assertThat(SoakRun.chartPath(Path.of("src/docs/reports/soak-report.md"))).isEqualTo(Path.of("src/docs/reports/soak-chart.png"));
		assertThat(SoakRun.chartPath(Path.of("out/today.md"))).isEqualTo(Path.of("out/today.png"));
	}

	private static SoakAnalysis.Verdict verdict(SoakAnalysis a, String name) {
		return a.verdicts().stream().filter((v) -> v.name().startsWith(name)).findFirst().orElseThrow();
	}

}
