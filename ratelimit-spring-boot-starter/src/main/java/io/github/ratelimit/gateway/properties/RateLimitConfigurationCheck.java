package io.github.ratelimit.gateway.properties;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.core.env.Environment;

/**
 * Validates the configuration when the application context starts, independently of which beans the application
 * replaces: first the {@code ratelimit.*} properties (their names: {@link UnknownProperties}, a misspelt key or a
 * key of another type of limit; their values: {@link RateLimitPropertiesValidator}), then, if they are valid, the
 * routes' {@code RateLimit} arguments against them ({@link RouteArgumentsValidator}). A bad name or value stops
 * start-up with a {@link RateLimitConfigurationException} naming each property; endpoint groups whose global limits
 * only some plans carry are logged at WARN, and environment variables starting with {@code RATELIMIT_} that are near
 * no property's name (left alone) at INFO.
 */
public class RateLimitConfigurationCheck implements InitializingBean {

	private static final Logger logger = LoggerFactory.getLogger(RateLimitConfigurationCheck.class);

	private final RateLimitProperties properties;

	private final RouteArgumentsValidator routes;

	private final @Nullable Environment environment;

	/**
	 * Create the check of the properties' values and the routes only (not of the names in the environment).
	 * @param properties the bound {@code ratelimit.*} properties
	 * @param routes checks the routes' filter arguments against the properties
	 */
	public RateLimitConfigurationCheck(RateLimitProperties properties, RouteArgumentsValidator routes) {
		this(properties, routes, null);
	}

	/**
	 * Create the check.
	 * @param properties the bound {@code ratelimit.*} properties
	 * @param routes checks the routes' filter arguments against the properties
	 * @param environment the environment the properties are bound from, whose names under {@code ratelimit} are
	 * checked too; {@code null} to check the values only
	 */
	public RateLimitConfigurationCheck(RateLimitProperties properties, RouteArgumentsValidator routes,
			@Nullable Environment environment) {
		this.properties = properties;
		this.routes = routes;
		this.environment = environment;
	}

	/**
	 * Run the checks.
	 * @throws RateLimitConfigurationException listing every problem, if any
	 */
	@Override
	public void afterPropertiesSet() {
		List<ConfigurationViolation> violations = RateLimitPropertiesValidator.validate(this.properties);
		if (this.environment != null) {
			UnknownProperties.Found names = UnknownProperties.find(this.environment);
			violations = merge(names.violations(), violations);
			if (!names.ignoredVariables().isEmpty()) {
				logger.info("Environment variables {} name no ratelimit.* property and are near none: left alone",
						names.ignoredVariables());
			}
		}
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

	/**
	 * The problems of the names first (a misspelt key often explains a value's problem), then those of the values;
	 * a key of another type of limit whose value is refused too is reported once.
	 * @param names the problems of the names ({@link UnknownProperties})
	 * @param values the problems of the values ({@link RateLimitPropertiesValidator})
	 * @return both
	 */
	static List<ConfigurationViolation> merge(List<ConfigurationViolation> names, List<ConfigurationViolation> values) {
		Set<String> reported = values.stream().map(ConfigurationViolation::property).collect(Collectors.toSet());
		List<ConfigurationViolation> merged = new ArrayList<>();
		names.stream().filter((v) -> !reported.contains(v.property())).forEach(merged::add);
		merged.addAll(values);
		return merged;
	}

}
