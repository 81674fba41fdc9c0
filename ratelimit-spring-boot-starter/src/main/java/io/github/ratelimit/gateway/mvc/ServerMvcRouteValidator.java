package io.github.ratelimit.gateway.mvc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.properties.RouteArgumentsValidator;
import io.github.ratelimit.gateway.route.RateLimitArguments;
import io.github.ratelimit.gateway.route.RouteArgumentRules;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.cloud.gateway.server.mvc.config.FilterProperties;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.config.RouteProperties;
import org.springframework.util.StringUtils;

/**
 * Checks the {@code RateLimit} filters of the Server MVC gateway's configured routes
 * ({@code spring.cloud.gateway.server.webmvc.routes} and {@code routes-map}) by the {@link RouteArgumentRules}, at
 * start-up and on every reload (run by the properties' start-up check and reloader through
 * {@link RouteArgumentsValidator}), each problem named after the filter's property. Filters built from Java are
 * checked by the {@link RateLimitFilterFunctionsCheck}.
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

	/**
	 * The arguments of the {@code RateLimit} filters of the configured routes, bound as Gateway Server MVC binds
	 * them (relaxed names, the shortcut's value as {@code group}), by route id: so that the limiter knows these
	 * routes from start-up (the actuator endpoint lists them), not only from their first request. Routes without an
	 * id and filters whose arguments do not bind are left out (the start-up check reports those).
	 * @return the arguments of each configured route's first {@code RateLimit} filter, by route id
	 */
	public Map<String, RateLimitArguments> configuredFilters() {
		Map<String, RateLimitArguments> filters = new LinkedHashMap<>();
		if (this.gateway == null) {
			return filters;
		}
		Map<String, RouteProperties> routes = new LinkedHashMap<>();
		this.gateway.getRoutes().forEach((route) -> routes.putIfAbsent(route.getId(), route));
		this.gateway.getRoutesMap().forEach((id, route) -> routes.putIfAbsent((route.getId() != null) ? route.getId() : id, route));
		routes.forEach((id, route) -> {
			if (id == null) {
				return;
			}
			for (FilterProperties filter : route.getFilters()) {
				String name = filter.getName();
				if (name != null && OPERATION.equals(StringUtils.uncapitalize(name))) {
					bind(filter.getArgs()).ifPresent((arguments) -> filters.putIfAbsent(id, arguments));
				}
			}
		});
		return filters;
	}

	private static Optional<RateLimitArguments> bind(Map<String, String> args) {
		Map<String, String> named = new LinkedHashMap<>(args);
		String shortcut = named.remove(RouteArgumentRules.FIRST_SHORTCUT_KEY);
		if (shortcut != null) {
			named.putIfAbsent("group", shortcut);
		}
		try {
			return Optional.of(new Binder(new MapConfigurationPropertySource(named)).bindOrCreate("",
					Bindable.of(RateLimitArguments.class)));
		}
		catch (RuntimeException ex) { // a value that does not convert: the start-up check names it
			return Optional.empty();
		}
	}

	@Override
	public String toString() {
		return "ServerMvcRouteValidator[" + ((this.gateway != null) ? this.gateway.getRoutes().size() : 0) + " routes]";
	}

}
