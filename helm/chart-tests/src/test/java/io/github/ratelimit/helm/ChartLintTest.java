package io.github.ratelimit.helm;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code helm lint --strict}: warnings fail too. */
class ChartLintTest {

	@Test
	void lintStrictPasses() {
		LintResult result = new Helm(HelmChart.dir()).lint().strict().call();

		assertThat(result.isFailed()).as("lint failed: %s", result.getMessages()).isFalse();
		assertThat(result.getMessages()).as("not even a recommendation (INFO) is left").isEmpty();
	}

}
