package io.github.ratelimit.gateway.properties;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Thrown at start-up (or when a route is built) when the rate limit configuration is invalid. Its message names
 * every offending property; {@link RateLimitConfigurationFailureAnalyzer} turns it into Spring Boot's
 * "APPLICATION FAILED TO START" report.
 */
public class RateLimitConfigurationException extends IllegalStateException {

	private final List<ConfigurationViolation> violations;

	/**
	 * Create an exception.
	 * @param violations the problems found, not empty
	 */
	public RateLimitConfigurationException(List<ConfigurationViolation> violations) {
		super("Invalid rate limit configuration:\n" + violations.stream()
			.map((v) -> "  - " + v)
			.collect(Collectors.joining("\n")));
		this.violations = List.copyOf(violations);
	}

	/**
	 * The problems found.
	 * @return the violations, not empty
	 */
	public List<ConfigurationViolation> getViolations() {
		return this.violations;
	}

}
