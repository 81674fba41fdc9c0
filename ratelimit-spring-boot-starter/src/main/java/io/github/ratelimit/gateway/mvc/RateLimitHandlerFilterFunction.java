package io.github.ratelimit.gateway.mvc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.route.RateLimitArguments;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import io.github.ratelimit.gateway.route.RouteRateLimiter;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * One {@code RateLimit} filter of a Server MVC route: its arguments, and its settings once resolved against the
 * limits for the route it runs on (its id is the group when the filter names none). Built by
 * {@link RateLimitFilterFunctions}; the work is the {@link ServerMvcRateLimiter}'s.
 */
final class RateLimitHandlerFilterFunction implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private final RateLimitArguments arguments;

	/** Settings by route id ({@code ""} for a route without one): one entry, unless the filter is shared. */
	private final Map<String, RouteLimitSettings> settings = new ConcurrentHashMap<>(2);

	private volatile @Nullable ServerMvcRateLimiter limiter;

	/** When the filter was built, in milliseconds since the epoch: tells which context's start built it. */
	private final long builtAt = System.currentTimeMillis();

	RateLimitHandlerFilterFunction(RateLimitArguments arguments) {
		this.arguments = new RateLimitArguments().setGroup(arguments.getGroup())
			.setKeyBy(arguments.getKeyBy())
			.setHeader(arguments.getHeader())
			.setCost(arguments.getCost())
			.setCritical(arguments.getCritical())
			.setShadow(arguments.getShadow());
	}

	@Override
	public ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next) throws Exception {
		ServerMvcRateLimiter limiter = this.limiter;
		if (limiter == null) {
			limiter = MvcUtils.getApplicationContext(request).getBean(ServerMvcRateLimiter.class);
			this.limiter = limiter;
		}
		return limiter.filter(request, next, this);
	}

	/** When the filter was built ({@link System#currentTimeMillis()}). */
	long builtAt() {
		return this.builtAt;
	}

	/** The arguments as given. */
	RateLimitArguments arguments() {
		return this.arguments;
	}

	/**
	 * The settings for the route a request was matched to.
	 * @throws io.github.ratelimit.gateway.properties.RateLimitConfigurationException if the arguments do not fit
	 * the limits (only for a filter that could not be checked at start-up)
	 */
	RouteLimitSettings settings(ServerRequest request, RouteRateLimiter routes) {
		String routeId = (String) request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR).orElse(null);
		return this.settings.computeIfAbsent((routeId != null) ? routeId : "",
				(id) -> routes.settings(routeId, this.arguments));
	}

	@Override
	public String toString() {
		return "RateLimit" + this.arguments.toString().substring("RateLimitArguments".length());
	}

}
