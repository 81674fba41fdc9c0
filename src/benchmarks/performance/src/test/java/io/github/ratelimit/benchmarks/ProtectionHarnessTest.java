package io.github.ratelimit.benchmarks;

import java.util.List;

import io.github.ratelimit.benchmarks.ProtectionDriver.Answer;
import io.github.ratelimit.benchmarks.ProtectionDriver.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProtectionHarnessTest {

	@Test
	void aShedIsA503WithTheOverloadedProblemAnyOther503IsNot() {
		assertThat(ProtectionDriver.classify(new Answer(200, "{}"))).isEqualTo(Outcome.OK);
		assertThat(ProtectionDriver.classify(new Answer(503,
				"{\"type\":\"https://example.org/upstream-protection.md#overloaded\",\"title\":\"Upstream overloaded\"}")))
			.isEqualTo(Outcome.SHED);
		assertThat(ProtectionDriver.classify(new Answer(503, "{\"title\":\"Rate limiter unavailable\"}")))
			.isEqualTo(Outcome.OTHER);
		assertThat(ProtectionDriver.classify(new Answer(429, ""))).isEqualTo(Outcome.LIMITED);
	}

	@Test
	void percentilesAreNearestRank() {
		List<Double> values = List.of(5.0, 1.0, 4.0, 2.0, 3.0);
		assertThat(ProtectionReport.percentile(values, 50)).isEqualTo(3.0);
		assertThat(ProtectionReport.percentile(values, 99)).isEqualTo(5.0);
		assertThat(ProtectionReport.percentile(List.of(), 99)).isNaN();
	}

	@Test
	void everyRunHasPhasesAtOneTwoAndFourTimesCapacityThenHalf() {
		assertThat(ProtectionDriver.phases(false)).extracting(ProtectionDriver.Phase::multiple)
			.containsExactly(1.0, 2.0, 4.0, 0.5);
		assertThat(ProtectionDriver.phases(true)).extracting(ProtectionDriver.Phase::multiple)
			.containsExactly(1.0, 2.0, 4.0, 0.5);
	}

}
