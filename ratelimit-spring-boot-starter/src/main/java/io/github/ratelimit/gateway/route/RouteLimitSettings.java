package io.github.ratelimit.gateway.route;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import org.jspecify.annotations.Nullable;

/**
 * The resolved rate limit settings of one route, whichever front end serves it.
 *
 * @param routeId the route id (the group when the route has none)
 * @param group the endpoint group (the route id when the route names none)
 * @param keyBy what identifies the client
 * @param header the request header identifying the client with {@link KeyBy#HEADER}, else {@code null}
 * @param cost tokens per request, at least 1
 * @param critical whether the route fails closed when the limiter is unavailable
 * @param shadow whether decisions are only observed, never enforced
 * @param usage how the route's answers decide what a request is charged ({@link RouteUsage#NONE}: they do not)
 * @param protection the upstream protection the route's admitted requests go through ({@code protect}), or
 * {@code null} for none
 * @param priority the priority of the route's requests for every plan ({@code priority}), or {@code null} for the
 * plan's
 */
public record RouteLimitSettings(String routeId, String group, KeyBy keyBy, @Nullable String header, long cost,
		boolean critical, boolean shadow, RouteUsage usage, @Nullable UpstreamProtection protection,
		@Nullable Priority priority) {

	/**
	 * The settings of a route without upstream protection.
	 * @param routeId the route id (the group when the route has none)
	 * @param group the endpoint group (the route id when the route names none)
	 * @param keyBy what identifies the client
	 * @param header the request header identifying the client with {@link KeyBy#HEADER}, else {@code null}
	 * @param cost tokens per request, at least 1
	 * @param critical whether the route fails closed when the limiter is unavailable
	 * @param shadow whether decisions are only observed, never enforced
	 * @param usage how the route's answers decide what a request is charged
	 */
	public RouteLimitSettings(String routeId, String group, KeyBy keyBy, @Nullable String header, long cost,
			boolean critical, boolean shadow, RouteUsage usage) {
		this(routeId, group, keyBy, header, cost, critical, shadow, usage, null, null);
	}

	/**
	 * The settings of a route whose answers do not change what it is charged.
	 * @param routeId the route id (the group when the route has none)
	 * @param group the endpoint group (the route id when the route names none)
	 * @param keyBy what identifies the client
	 * @param header the request header identifying the client with {@link KeyBy#HEADER}, else {@code null}
	 * @param cost tokens per request, at least 1
	 * @param critical whether the route fails closed when the limiter is unavailable
	 * @param shadow whether decisions are only observed, never enforced
	 */
	public RouteLimitSettings(String routeId, String group, KeyBy keyBy, @Nullable String header, long cost,
			boolean critical, boolean shadow) {
		this(routeId, group, keyBy, header, cost, critical, shadow, RouteUsage.NONE);
	}

	/**
	 * Whether the route's requests are refused while the limiter is unavailable: critical routes that enforce (a
	 * shadow route only observes, so it never refuses, and falls back like any other).
	 * @return {@code critical && !shadow}
	 */
	public boolean failsClosed() {
		return this.critical && !this.shadow;
	}

}
