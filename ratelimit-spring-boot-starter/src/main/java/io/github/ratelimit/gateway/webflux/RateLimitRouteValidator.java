package io.github.ratelimit.gateway.webflux;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.properties.RateLimitPropertiesValidator;
import io.github.ratelimit.gateway.properties.RouteArgumentsValidator;
import io.github.ratelimit.gateway.route.RouteArgumentRules;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;

/**
 * Checks the {@code RateLimit} filters of the WebFlux gateway's configured routes and default filters
 * ({@code spring.cloud.gateway.server.webflux.*}) by the {@link RouteArgumentRules}, at start-up and on every reload
 * (run by the properties' start-up check and reloader through {@link RouteArgumentsValidator}). Routes from other
 * sources (a {@code RouteLocator} bean) are checked when the factory builds their filter.
 */
public final class RateLimitRouteValidator implements RouteArgumentsValidator {

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	private static final String DEFAULT_FILTERS = "spring.cloud.gateway.server.webflux.default-filters";

	private final @Nullable GatewayProperties gateway;

	/**
	 * Create a validator of the configured routes.
	 * @param gateway the gateway's route definitions ({@code spring.cloud.gateway.server.webflux.*}), or
	 * {@code null} when there are none (then {@link #validateRoutes} finds nothing)
	 */
	public RateLimitRouteValidator(@Nullable GatewayProperties gateway) {
		this.gateway = gateway;
	}

	/**
	 * Check the {@code RateLimit} filters of the gateway's configured routes and default filters, as written in
	 * the configuration (raw arguments: names, {@code key-by}, {@code cost}, {@code critical}, {@code shadow}), and
	 * each route's group and cost against the plans.
	 * @param p the rate limit properties, already found valid by {@link RateLimitPropertiesValidator}
	 * @return the problems found, each named after the route's filter property
	 * ({@code spring.cloud.gateway.server.webflux.routes[i].filters[j].args.<name>}); empty when valid or when
	 * there are no route definitions
	 */
	@Override
	public List<ConfigurationViolation> validateRoutes(RateLimitProperties p) {
		List<ConfigurationViolation> v = new ArrayList<>();
		if (this.gateway == null) {
			return v;
		}
		List<RouteDefinition> routes = this.gateway.getRoutes();
		for (int r = 0; r < routes.size(); r++) {
			List<FilterDefinition> filters = routes.get(r).getFilters();
			for (int f = 0; f < filters.size(); f++) {
				if (RateLimitGatewayFilterFactory.FILTER_NAME.equals(filters.get(f).getName())) {
					RouteArgumentRules.validateFilterArgs(p, ROUTES + "[" + r + "].filters[" + f + "]", routes.get(r).getId(),
							filters.get(f).getArgs(), v);
				}
			}
		}
		List<FilterDefinition> defaults = this.gateway.getDefaultFilters();
		for (int f = 0; f < defaults.size(); f++) {
			if (RateLimitGatewayFilterFactory.FILTER_NAME.equals(defaults.get(f).getName())) {
				for (RouteDefinition route : routes) {
					RouteArgumentRules.validateFilterArgs(p, DEFAULT_FILTERS + "[" + f + "] (route " + route.getId() + ")", route.getId(),
							defaults.get(f).getArgs(), v);
				}
			}
		}
		return v;
	}

	@Override
	public String toString() {
		return "RateLimitRouteValidator[" + ((this.gateway != null) ? this.gateway.getRoutes().size() : 0) + " routes]";
	}

}
