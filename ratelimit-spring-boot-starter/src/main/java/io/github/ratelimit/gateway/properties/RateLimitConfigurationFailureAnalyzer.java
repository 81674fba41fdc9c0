package io.github.ratelimit.gateway.properties;

import java.util.stream.Collectors;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@link RateLimitConfigurationException} as a start-up failure naming each property and its fix. */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
		String description = "The rate limit configuration is invalid:\n\n" + cause.getViolations()
			.stream()
			.map((v) -> "    Property: " + v.property() + "\n    Problem:  " + v.problem())
			.collect(Collectors.joining("\n\n"));
		String action = "Update your application's configuration:\n\n" + cause.getViolations()
			.stream()
			.map((v) -> "    " + v.property() + ": " + v.fix())
			.collect(Collectors.joining("\n"));
		return new FailureAnalysis(description, action, cause);
	}

}
