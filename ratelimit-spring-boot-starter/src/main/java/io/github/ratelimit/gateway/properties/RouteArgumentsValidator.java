package io.github.ratelimit.gateway.properties;

import java.util.List;

/**
 * Checks the routes' {@code RateLimit} filter arguments against the {@code ratelimit.*} properties. The rules live
 * with the filter ({@code filter.RateLimitRouteValidator}); this interface lets the start-up check
 * ({@link RateLimitConfigurationCheck}) and the reload ({@link LimitReloader}) run them after the property rules
 * without this package depending on the filter.
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

}
