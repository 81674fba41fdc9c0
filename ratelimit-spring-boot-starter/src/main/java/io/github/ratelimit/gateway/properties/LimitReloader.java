package io.github.ratelimit.gateway.properties;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;

/**
 * Takes new limits into use when the {@code ratelimit.*} properties bean is re-bound at runtime, without a restart.
 *
 * <p>A {@link BeanPostProcessor} acting after each re-binding (Spring Cloud's {@code /actuator/refresh} or an
 * {@code EnvironmentChangeEvent}; why: {@code src/docs/design/configuration.md}): it validates the re-bound
 * properties (the names under {@code ratelimit} in the environment as at start-up, {@link UnknownProperties}, and
 * their values, {@link RateLimitPropertiesValidator}; then the routes' {@code RateLimit} arguments against them
 * through the {@link RouteArgumentsValidator}) and calls {@link LimitResolver#reload()}. Invalid new properties are
 * logged at ERROR, one line per offending property, and the previous limits stay in force; requests never fail
 * because of it. The first initialisation (start-up) is left to the start-up check.
 *
 * <p>What follows a reload: every request resolves its limits anew (new capacity, refill, algorithm, scope, policy
 * names) on its next check; a token bucket clamps its stored tokens to a smaller capacity and keeps refilling at the
 * new rate; a remembered denial (over-limit cache) or local fallback bucket made for the old limits no longer
 * applies. A group's {@code critical}/{@code shadow} settings are read when a route's filter is built, so they follow
 * when Gateway rebuilds its routes (as {@code /actuator/refresh} does). Settings read once at start-up (API-key
 * header, anonymous plan, trusted proxies, timeouts, breaker, header style, key prefix, static API keys, the
 * principals' plan claim and authority prefix) still need a restart.
 */
public class LimitReloader implements BeanPostProcessor, SmartInitializingSingleton, EnvironmentAware {

	private static final Logger logger = LoggerFactory.getLogger(LimitReloader.class);

	private final ObjectProvider<LimitResolver> resolver;

	private final Supplier<? extends RouteArgumentsValidator> routes;

	private volatile boolean started;

	private @Nullable Environment environment;

	/**
	 * Create the reloader.
	 * @param resolver the limit resolver to reload (looked up lazily: this is a bean post-processor)
	 * @param routes supplies the validator of the routes' filter arguments (called at each reload, so it can be
	 * looked up lazily); it may supply {@code null} when there are no routes to check
	 */
	public LimitReloader(ObjectProvider<LimitResolver> resolver, Supplier<? extends RouteArgumentsValidator> routes) {
		this.resolver = resolver;
		this.routes = routes;
	}

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void afterSingletonsInstantiated() {
		this.started = true;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (this.started && bean instanceof RateLimitProperties properties) {
			reload(properties);
		}
		return bean;
	}

	/**
	 * Validate re-bound properties and take them into use if valid.
	 * @param properties the re-bound properties
	 * @return the problems found (logged at ERROR), empty when the new limits are in force
	 */
	public List<ConfigurationViolation> reload(RateLimitProperties properties) {
		LimitResolver limits = this.resolver.getIfAvailable();
		if (limits == null) {
			return List.of();
		}
		List<ConfigurationViolation> violations = new ArrayList<>(RateLimitPropertiesValidator.validate(properties));
		Environment environment = this.environment;
		if (environment != null) {
			violations = new ArrayList<>(
					RateLimitConfigurationCheck.merge(UnknownProperties.find(environment).violations(), violations));
		}
		RouteArgumentsValidator routes = this.routes.get();
		if (violations.isEmpty() && routes != null) {
			violations.addAll(routes.validateRoutes(properties));
		}
		if (violations.isEmpty()) {
			violations.addAll(limits.reload());
		}
		if (violations.isEmpty()) {
			logger.info("Rate limits reloaded: plans {}", properties.getPlans().keySet());
		}
		else {
			logger.error("The changed rate limit configuration is invalid; the previous limits stay in force:\n{}",
					violations.stream().map((v) -> "  - " + v).collect(Collectors.joining("\n")));
		}
		return violations;
	}

}
