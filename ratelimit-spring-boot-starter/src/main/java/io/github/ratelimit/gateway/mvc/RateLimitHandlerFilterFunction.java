package io.github.ratelimit.gateway.mvc;

import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.route.RateLimitArguments;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * One {@code RateLimit} filter of a Server MVC route: its arguments, and its settings once resolved against the
 * limits for the route it runs on (its id is the group when the filter names none). Built by
 * {@link RateLimitFilterFunctions}; the work is the {@link ServerMvcFrontEnd}'s, found in the request's application
 * context on the first request; without one (the starter switched off) every request passes.
 */
final class RateLimitHandlerFilterFunction implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private final RateLimitArguments arguments;

	/**
	 * Settings by route id ({@code ""} for a route without one), with the limits they were resolved against: one
	 * entry, unless the filter is shared.
	 */
	private final Map<String, Resolved> settings = new ConcurrentHashMap<>(2);

	/** The front end, once looked up; {@link #PASS} when the context has none. */
	private volatile @Nullable Object frontEnd;

	/** Stands for no front end: every request passes. */
	private static final Object PASS = new Object();

	/** When the filter was built, in milliseconds since the epoch: tells which context's start built it. */
	private final long builtAt = System.currentTimeMillis();

	/** The thread that built the filter: a context builds its routes on the thread that starts it. */
	private final Thread builtBy = Thread.currentThread();

	RateLimitHandlerFilterFunction(RateLimitArguments arguments) {
		this.arguments = new RateLimitArguments().setGroup(arguments.getGroup())
			.setKeyBy(arguments.getKeyBy())
			.setHeader(arguments.getHeader())
			.setCost(arguments.getCost())
			.setCritical(arguments.getCritical())
			.setShadow(arguments.getShadow())
			.setUsage(arguments.getUsage())
			.setReserve(arguments.getReserve())
			.setReserveMax(arguments.getReserveMax())
			.setCountWhen(arguments.getCountWhen())
			.setProtect(arguments.getProtect())
			.setPriority(arguments.getPriority());
	}

	@Override
	public ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next) throws Exception {
		Object frontEnd = this.frontEnd;
		if (frontEnd == null) {
			ServerMvcFrontEnd found = MvcUtils.getApplicationContext(request)
				.getBeanProvider(ServerMvcFrontEnd.class)
				.getIfAvailable();
			frontEnd = (found != null) ? found : PASS;
			this.frontEnd = frontEnd;
		}
		return (frontEnd instanceof ServerMvcFrontEnd limiting) ? limiting.filter(request, next, this)
				: next.handle(request);
	}

	/** When the filter was built ({@link System#currentTimeMillis()}). */
	long builtAt() {
		return this.builtAt;
	}

	/** The thread that built the filter. */
	Thread builtBy() {
		return this.builtBy;
	}

	/** The arguments as given. */
	RateLimitArguments arguments() {
		return this.arguments;
	}

	/**
	 * The settings for the route a request was matched to.
	 * @throws io.github.ratelimit.gateway.properties.RateLimitConfigurationException if the arguments do not fit
	 * the limits (only for a filter that could not be checked at start-up: no group, so its route's id decides)
	 */
	RouteLimitSettings settings(ServerRequest request, RateLimitRoutes routes) {
		String routeId = (String) request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR).orElse(null);
		Object limits = routes.limitsInForce();
		Resolved resolved = this.settings.get((routeId != null) ? routeId : "");
		if (resolved == null || resolved.limits() != limits) { // first request, or limits reloaded since
			resolved = new Resolved(limits, routes.settings(routeId, this.arguments));
			this.settings.put((routeId != null) ? routeId : "", resolved);
		}
		return resolved.settings();
	}

	/** The filter as a route would name it, with the arguments given: {@code RateLimit[group=login, keyBy=IP]}. */
	@Override
	public String toString() {
		StringJoiner given = new StringJoiner(", ", "RateLimit[", "]");
		add(given, "group", this.arguments.getGroup());
		add(given, "keyBy", this.arguments.getKeyBy());
		add(given, "header", this.arguments.getHeader());
		add(given, "cost", this.arguments.getCost());
		add(given, "critical", this.arguments.getCritical());
		add(given, "shadow", this.arguments.getShadow());
		add(given, "usage", this.arguments.getUsage());
		add(given, "reserve", this.arguments.getReserve());
		add(given, "reserveMax", this.arguments.getReserveMax());
		add(given, "countWhen", this.arguments.getCountWhen());
		add(given, "protect", this.arguments.getProtect());
		add(given, "priority", this.arguments.getPriority());
		return given.toString();
	}

	private static void add(StringJoiner given, String name, @Nullable Object value) {
		if (value != null) {
			given.add(name + "=" + value);
		}
	}

	/** A route's settings and the limits in force they were resolved against. */
	private record Resolved(Object limits, RouteLimitSettings settings) {
	}

}
