package io.github.ratelimit.gateway.webflux;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.support.GatewayToStringStyler;
import org.springframework.web.server.ServerWebExchange;

/**
 * The {@code RateLimit} filter while rate limiting is off ({@code ratelimit.enabled=false}): every request passes
 * unchecked, so that routes naming the filter still start and serve, as a feature flag is expected to behave.
 * Nothing is limited, counted or refused (no 429, 503 or 400), and nothing connects to Redis.
 *
 * <p>One WARN at start-up names every configured route ({@code spring.cloud.gateway.server.webflux.routes}) that names the filter, or says that the
 * default filters name it; a route from another source (a discovery locator, the actuator) gets a WARN of its own
 * when its filter is first built.
 *
 * <p>Takes the same arguments as the {@link RateLimitGatewayFilterFactory} ({@code group}, {@code key-by},
 * {@code cost}, {@code critical}, {@code shadow}; shortcut {@code RateLimit=<group>}), bound and then ignored: they
 * are not validated, since no limits are in force.
 */
public class DisabledRateLimitGatewayFilterFactory extends AbstractGatewayFilterFactory<RateLimitGatewayFilterFactory.Config>
		implements SmartInitializingSingleton {

	private static final Logger logger = LoggerFactory.getLogger(DisabledRateLimitGatewayFilterFactory.class);

	private static final String DISABLED = "Rate limiting is disabled (ratelimit.enabled=false)";

	/** The start-up WARN, or {@code null} when no configured route names the filter. */
	private final @Nullable String startupWarning;

	/** Whether the configured default filters name the filter (then every route passes unchecked). */
	private final boolean defaultFilter;

	/** Routes named by the start-up WARN, and those of other sources warned about since. */
	private final Set<String> warnedRoutes = ConcurrentHashMap.newKeySet();

	/**
	 * Create the factory.
	 * @param gateway the gateway's configured routes and default filters, or {@code null} when there are none
	 */
	public DisabledRateLimitGatewayFilterFactory(@Nullable GatewayProperties gateway) {
		super(RateLimitGatewayFilterFactory.Config.class);
		Set<String> routes = new LinkedHashSet<>();
		boolean defaults = false;
		if (gateway != null) {
			for (RouteDefinition route : gateway.getRoutes()) {
				if (namesThisFilter(route.getFilters())) {
					routes.add(route.getId());
				}
			}
			defaults = namesThisFilter(gateway.getDefaultFilters());
		}
		this.defaultFilter = defaults;
		this.warnedRoutes.addAll(routes);
		if (defaults) {
			this.startupWarning = DISABLED + ": the default filters name the RateLimit filter, so every route passes"
					+ " unchecked (no limits, no 429 or 503, no path check)";
		}
		else if (!routes.isEmpty()) {
			this.startupWarning = DISABLED + ": routes " + routes
					+ " name the RateLimit filter and pass unchecked (no limits, no 429 or 503, no path check)";
		}
		else {
			this.startupWarning = null;
		}
	}

	private static boolean namesThisFilter(List<FilterDefinition> filters) {
		return filters.stream().anyMatch((f) -> RateLimitGatewayFilterFactory.FILTER_NAME.equals(f.getName()));
	}

	/** Logs, once at start-up, the WARN naming the configured routes that pass unchecked (else one INFO line). */
	@Override
	public void afterSingletonsInstantiated() {
		if (this.startupWarning != null) {
			logger.warn(this.startupWarning);
		}
		else {
			logger.info(DISABLED);
		}
	}

	@Override
	public String name() {
		return RateLimitGatewayFilterFactory.FILTER_NAME;
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("group");
	}

	/**
	 * Build a filter that passes every request on unchanged; for a route the start-up WARN did not name, log a WARN
	 * once.
	 * @param config the route's arguments (not used)
	 * @return the filter
	 */
	@Override
	public GatewayFilter apply(RateLimitGatewayFilterFactory.Config config) {
		String routeId = config.getRouteId();
		if (!this.defaultFilter && routeId != null && this.warnedRoutes.add(routeId)) {
			logger.warn("{}: route {} names the RateLimit filter and passes unchecked", DISABLED, routeId);
		}
		return new PassThroughFilter(config.getGroup());
	}

	/** The filter of one route: passes every request on unchanged. */
	private final class PassThroughFilter implements GatewayFilter {

		private final @Nullable String group;

		PassThroughFilter(@Nullable String group) {
			this.group = group;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			return chain.filter(exchange);
		}

		@Override
		public String toString() {
			return GatewayToStringStyler.filterToStringCreator(DisabledRateLimitGatewayFilterFactory.this)
				.append("group", this.group)
				.append("enabled", false)
				.toString();
		}

	}

}
