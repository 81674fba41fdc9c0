package io.github.ratelimit.gateway.properties;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.InitializingBean;

/**
 * Validates the configuration when the application context starts, independently of which beans the application
 * replaces: first the {@code ratelimit.*} properties ({@link RateLimitPropertiesValidator}), then, if they are
 * valid, the routes' {@code RateLimit} arguments against them ({@link RouteArgumentsValidator}). A bad value stops
 * start-up with a {@link RateLimitConfigurationException} naming each property; endpoint groups whose global limits
 * only some plans carry are logged at WARN.
 */
public class RateLimitConfigurationCheck implements InitializingBean {

	private static final Logger logger = LoggerFactory.getLogger(RateLimitConfigurationCheck.class);

	private final RateLimitProperties properties;

	private final RouteArgumentsValidator routes;

	/**
	 * Create the check.
	 * @param properties the bound {@code ratelimit.*} properties
	 * @param routes checks the routes' filter arguments against the properties
	 */
	public RateLimitConfigurationCheck(RateLimitProperties properties, RouteArgumentsValidator routes) {
		this.properties = properties;
		this.routes = routes;
	}

	/**
	 * Run the checks.
	 * @throws RateLimitConfigurationException listing every problem, if any
	 */
	@Override
	public void afterPropertiesSet() {
		List<ConfigurationViolation> violations = RateLimitPropertiesValidator.validate(this.properties);
		if (violations.isEmpty()) {
			violations = this.routes.validateRoutes(this.properties);
		}
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		for (String gap : RateLimitPropertiesValidator.globalLimitGaps(this.properties)) {
			logger.warn(gap);
		}
	}

}
