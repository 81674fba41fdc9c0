package io.github.ratelimit.scalerun;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The scale run in miniature, so that it keeps working as the starter changes (the real run takes minutes). */
class ClusterScaleRunTest {

	@Test
	void aSmallRunReportsEveryFigureAndTheKeysExpire() {
		String report = ClusterScaleRun.run(ClusterScaleRun.Options.parse(new String[] { "--keys", "1000",
				"--concurrency", "16", "--paced-rate", "500", "--paced-duration", "1s", "--idle-ttl", "500ms" }));
		assertThat(report).contains("# Scale run: 1,000 clients on a Redis Cluster", "3 masters",
				"| cold (one Redis GET each) |", "| warm (cache hits) |", "| 2a: first check per client",
				"## 3. Checks at the design's per-instance load: 500 checks/s for 1 s",
				"## 4. Key count after traffic stops");
		// the curve ends at zero keys
		assertThat(report).contains("| 0 | 0 | 0 | 0 |\n");
	}

	@Test
	void optionsHaveDefaultsAndRejectUnknownOnes() {
		ClusterScaleRun.Options defaults = ClusterScaleRun.Options.parse(new String[0]);
		assertThat(defaults.keys()).isEqualTo(200_000);
		assertThat(defaults.pacedRate()).isEqualTo(2_500);
		assertThat(defaults.idleTtl()).isEqualTo(Duration.ofMinutes(1));
		assertThat(ClusterScaleRun.Options.parse(new String[] { "--idle-ttl", "500ms" }).idleTtl())
			.isEqualTo(Duration.ofMillis(500));
		assertThat(defaults.nodes()).isNull();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ClusterScaleRun.Options.parse(new String[] { "--kees", "10" }));
	}

}
