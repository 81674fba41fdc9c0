package io.github.ratelimit.gateway.properties;

/**
 * One problem found in the rate limit configuration.
 *
 * @param property the full name of the offending property, e.g. {@code ratelimit.plans.free.default[0].capacity}
 * @param problem what is wrong, including the rejected value where it is not a credential
 * @param fix how to fix it
 */
public record ConfigurationViolation(String property, String problem, String fix) {

	@Override
	public String toString() {
		return this.property + ": " + this.problem + " Fix: " + this.fix;
	}

}
