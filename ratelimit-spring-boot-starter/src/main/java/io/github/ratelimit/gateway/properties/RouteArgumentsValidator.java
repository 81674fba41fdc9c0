package io.github.ratelimit.gateway.properties;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks the routes' {@code RateLimit} filter arguments against the {@code ratelimit.*} properties. The rules are
 * {@code route.RouteArgumentRules}; each front end has a validator of its configured routes
 * ({@code webflux.RateLimitRouteValidator}, {@code mvc.ServerMvcRouteValidator}). This interface lets the start-up
 * check ({@link RateLimitConfigurationCheck}) and the reload ({@link LimitReloader}) run them after the property
 * rules without this package depending on the front ends.
 */
@FunctionalInterface
public interface RouteArgumentsValidator {

	/**
	 * Check the configured routes against the properties.
	 * @param properties the {@code ratelimit.*} properties, already found valid by
	 * {@link RateLimitPropertiesValidator#validate}
	 * @return the problems found, one per offending route argument; empty when valid or when there are no routes
	 */
	List<ConfigurationViolation> validateRoutes(RateLimitProperties properties);

	/**
	 * One validator running several in order, collecting all their problems.
	 * @param validators the validators (for example one per front end); none means no routes to check
	 * @return the combined validator
	 */
	static RouteArgumentsValidator allOf(List<? extends RouteArgumentsValidator> validators) {
		List<RouteArgumentsValidator> all = List.copyOf(validators);
		return (properties) -> {
			List<ConfigurationViolation> violations = new ArrayList<>();
			for (RouteArgumentsValidator validator : all) {
				violations.addAll(validator.validateRoutes(properties));
			}
			return violations;
		};
	}

}
