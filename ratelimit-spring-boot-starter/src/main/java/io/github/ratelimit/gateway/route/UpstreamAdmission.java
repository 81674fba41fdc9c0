package io.github.ratelimit.gateway.route;

import java.util.Objects;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.metrics.DenialLog;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamPermit;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import org.jspecify.annotations.Nullable;

/**
 * The handler's step into a route's upstream protection, taken before the limiter chain so that a shed request takes
 * nothing from the client's limits: the request's priority (the route's, else its plan's), its permit, and the
 * meter and denial-log line of a shed.
 */
final class UpstreamAdmission {

	private final UpstreamProtections protections;

	private final RateLimitMetrics metrics;

	private final DenialLog denialLog;

	UpstreamAdmission(UpstreamProtections protections, RateLimitMetrics metrics, DenialLog denialLog) {
		this.protections = protections;
		this.metrics = metrics;
		this.denialLog = denialLog;
	}

	/**
	 * Admit a request into its route's upstream protection.
	 * @param client the request's client, with its plan
	 * @param route the route's settings
	 * @return the permit ({@link UpstreamPermit#NONE} on a route without protection), or {@code null} when the
	 * request is shed (counted and logged; in shadow mode, of the protection or the route, it is counted, logged
	 * and admitted all the same)
	 */
	@Nullable UpstreamPermit admit(ClientKey client, RouteLimitSettings route) {
		UpstreamProtection protection = route.protection();
		if (protection == null) {
			return UpstreamPermit.NONE;
		}
		Priority priority = priorityOf(client, route);
		UpstreamPermit permit = protection.tryAcquire(priority);
		if (permit != null) {
			return permit;
		}
		boolean shadow = protection.isShadow() || route.shadow();
		this.metrics.recordShed(route.routeId(), route.group(), protection.name(), priority, shadow);
		this.denialLog.shed(client, route.routeId(), route.group(), priority, protection.name(), shadow,
				shadow ? 0 : protection.retryAfterSeconds() * 1000);
		return shadow ? protection.acquire(priority) : null;
	}

	/**
	 * The answer to a request {@link #admit} shed.
	 * @param client the request's client
	 * @param route the route's settings, with a protection
	 * @return 503 overloaded, with the protection's {@code Retry-After}
	 */
	RateLimitRefusal shed(ClientKey client, RouteLimitSettings route) {
		UpstreamProtection protection = Objects.requireNonNull(route.protection(), "a route that sheds has one");
		return RateLimitRefusal.overloaded(priorityOf(client, route), protection.retryAfterSeconds());
	}

	/** The priority of a request: the route's, else the client's plan's. */
	private Priority priorityOf(ClientKey client, RouteLimitSettings route) {
		Priority priority = route.priority();
		return (priority != null) ? priority : this.protections.priorityOf(client.plan());
	}

}
