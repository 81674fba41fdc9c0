package io.github.ratelimit.gateway.mvc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.properties.RouteArgumentsValidator;
import io.github.ratelimit.gateway.route.RouteArgumentRules;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.server.mvc.config.FilterProperties;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.config.RouteProperties;
import org.springframework.util.StringUtils;

/**
 * Checks the {@code RateLimit} filters of the Server MVC gateway's configured routes
 * ({@code spring.cloud.gateway.server.webmvc.routes} and {@code routes-map}) by the {@link RouteArgumentRules}, at
 * start-up and on every reload (run by the properties' start-up check and reloader through
 * {@link RouteArgumentsValidator}), each problem named after the filter's property. Filters built from Java are
 * checked by the {@link ServerMvcRateLimiter}.
 */
public final class ServerMvcRouteValidator implements RouteArgumentsValidator {

	private static final String ROUTES = "spring.cloud.gateway.server.webmvc.routes";

	private static final String ROUTES_MAP = "spring.cloud.gateway.server.webmvc.routes-map";

	/** The filter's operation name, as Gateway Server MVC normalises configured names (first letter lower case). */
	private static final String OPERATION = "rateLimit";

	private final @Nullable GatewayMvcProperties gateway;

	/**
	 * Create a validator of the configured routes.
	 * @param gateway the gateway's route properties, or {@code null} when there are none (then
	 * {@link #validateRoutes} finds nothing)
	 */
	public ServerMvcRouteValidator(@Nullable GatewayMvcProperties gateway) {
		this.gateway = gateway;
	}

	/**
	 * Check the {@code RateLimit} filters of the configured routes, as written in the configuration, and each
	 * route's group and cost against the plans.
	 * @param properties the rate limit properties, already found valid
	 * @return the problems found, each named after the route's filter property
	 * ({@code spring.cloud.gateway.server.webmvc.routes[i].filters[j].args.<name>}); empty when valid or when there
	 * are no route properties
	 */
	@Override
	public List<ConfigurationViolation> validateRoutes(RateLimitProperties properties) {
		List<ConfigurationViolation> v = new ArrayList<>();
		if (this.gateway == null) {
			return v;
		}
		List<RouteProperties> routes = this.gateway.getRoutes();
		for (int r = 0; r < routes.size(); r++) {
			validate(properties, ROUTES + "[" + r + "]", routes.get(r).getId(), routes.get(r), v);
		}
		for (Map.Entry<String, RouteProperties> route : this.gateway.getRoutesMap().entrySet()) {
			validate(properties, ROUTES_MAP + "." + route.getKey(), route.getKey(), route.getValue(), v);
		}
		return v;
	}

	private static void validate(RateLimitProperties properties, String property, @Nullable String routeId,
			RouteProperties route, List<ConfigurationViolation> v) {
		List<FilterProperties> filters = route.getFilters();
		for (int f = 0; f < filters.size(); f++) {
			String name = filters.get(f).getName();
			if (name != null && OPERATION.equals(StringUtils.uncapitalize(name))) {
				RouteArgumentRules.validateFilterArgs(properties, property + ".filters[" + f + "]",
						(routeId != null) ? routeId : property, filters.get(f).getArgs(), v);
			}
		}
	}

	@Override
	public String toString() {
		return "ServerMvcRouteValidator[" + ((this.gateway != null) ? this.gateway.getRoutes().size() : 0) + " routes]";
	}

}
