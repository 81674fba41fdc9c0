package io.github.ratelimit.gateway.properties;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.diagnostics.FailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RateLimitConfigurationFailureAnalyzer}: the start-up report names each property, its problem and fix. */
class RateLimitConfigurationFailureAnalyzerTest {

	@Test
	void failureAnalysisNamesPropertyProblemAndFix() {
		RateLimitConfigurationException exception = new RateLimitConfigurationException(
				List.of(new ConfigurationViolation("ratelimit.plans.free.default[0].capacity", "must be between 1 and 2^53 tokens, was 0.",
						"set the largest burst the client may send, at least 1.")));
		FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer()
			.analyze(new IllegalStateException("wrapped", exception));
		assertThat(analysis.getDescription()).contains("Property: ratelimit.plans.free.default[0].capacity")
			.contains("Problem:  must be between 1 and 2^53 tokens, was 0.");
		assertThat(analysis.getAction())
			.contains("ratelimit.plans.free.default[0].capacity: set the largest burst the client may send, at least 1.");
	}

}
