package io.github.ratelimit.gateway.route;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import org.jspecify.annotations.Nullable;

/**
 * The rate limited routes: resolves and checks each route's {@code RateLimit} arguments against the limits in force,
 * and remembers the settings of every route built (for the actuator endpoint). Shared by the front ends.
 */
public final class RateLimitRoutes {

	private final LimitResolver limitResolver;

	private final UpstreamProtections protections;

	private final Map<String, RouteLimitSettings> routes = new ConcurrentHashMap<>();

	private final PrincipalRoutesNotice principalRoutesNotice = new PrincipalRoutesNotice(
			RateLimitRoutes.class.getClassLoader());

	/**
	 * Create the registry of routes without upstream protections.
	 * @param limitResolver the limits in force
	 */
	public RateLimitRoutes(LimitResolver limitResolver) {
		this(limitResolver, UpstreamProtections.NONE);
	}

	/**
	 * Create the registry.
	 * @param limitResolver the limits in force
	 * @param protections the upstream protections routes may name ({@code protect})
	 */
	public RateLimitRoutes(LimitResolver limitResolver, UpstreamProtections protections) {
		this.limitResolver = limitResolver;
		this.protections = protections;
	}

	/**
	 * Resolve and check one route's arguments against the limits in force, and remember the route.
	 * @param routeId the route id, or {@code null} when the route has none (then the group names it)
	 * @param arguments the route's {@code RateLimit} arguments
	 * @return the route's settings
	 * @throws RateLimitConfigurationException if the route has neither group nor id, the group is unknown, the cost
	 * exceeds a capacity, the {@code header} argument is missing with {@code key-by: header}, given with another
	 * {@code key-by} or no header name, or the usage arguments do not fit the group's limits (see
	 * {@link RouteUsage})
	 */
	public RouteLimitSettings settings(@Nullable String routeId, RateLimitArguments arguments) {
		List<ConfigurationViolation> violations = violations(routeId, arguments);
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		KeyBy keyBy = (arguments.getKeyBy() != null) ? arguments.getKeyBy() : KeyBy.API_KEY;
		long cost = (arguments.getCost() != null) ? arguments.getCost() : 1L;
		String explicitGroup = arguments.getGroup();
		String group = Objects.requireNonNull((explicitGroup != null && !explicitGroup.isBlank()) ? explicitGroup
				: routeId, "a valid route has a group or a route id");
		boolean critical = (arguments.getCritical() != null) ? arguments.getCritical()
				: this.limitResolver.isCriticalGroup(group);
		boolean shadow = (arguments.getShadow() != null) ? arguments.getShadow()
				: this.limitResolver.isShadowGroup(group);
		String id = (routeId != null) ? routeId : group;
		String header = (keyBy == KeyBy.HEADER)
				? Objects.requireNonNull(arguments.getHeader(), "a valid route keyed by header names one").strip() : null;
		RouteUsage usage = Objects.requireNonNull(RouteUsage.parse(arguments.getUsage(), arguments.getReserve(),
				arguments.getReserveMax(), arguments.getCountWhen(), "route '" + id + "' RateLimit", new ArrayList<>()),
				"valid usage arguments")
			.resolved(RouteArgumentRules.smallestUsageCapacity(this.limitResolver.effectiveProperties(), group, keyBy));
		String protect = arguments.getProtect();
		UpstreamProtection protection = (protect != null) ? this.protections.get(protect.strip()) : null;
		RouteLimitSettings settings = new RouteLimitSettings(id, group, keyBy, header, cost, critical, shadow, usage,
				protection, arguments.getPriority());
		this.routes.put(id, settings);
		if (keyBy == KeyBy.PRINCIPAL) {
			this.principalRoutesNotice.keyedByPrincipal(id);
		}
		return settings;
	}

	/**
	 * Check one route's arguments against the limits in force (validated), not the live properties, which a
	 * refresh may have made invalid; see {@link RouteArgumentRules#validateFilter}.
	 * @param routeId the route id, or {@code null} when the route has none (or it is not known yet)
	 * @param arguments the route's {@code RateLimit} arguments
	 * @return the problems found, each naming the route and the argument; empty when valid
	 */
	public List<ConfigurationViolation> violations(@Nullable String routeId, RateLimitArguments arguments) {
		KeyBy keyBy = (arguments.getKeyBy() != null) ? arguments.getKeyBy() : KeyBy.API_KEY;
		long cost = (arguments.getCost() != null) ? arguments.getCost() : 1L;
		List<ConfigurationViolation> usageViolations = new ArrayList<>();
		RouteUsage usage = RouteUsage.parse(arguments.getUsage(), arguments.getReserve(), arguments.getReserveMax(),
				arguments.getCountWhen(), "route '" + routeId + "' RateLimit", usageViolations);
		if (usage == null) {
			return usageViolations;
		}
		List<ConfigurationViolation> violations = new ArrayList<>(RouteArgumentRules.validateFilter(
				this.limitResolver.effectiveProperties(), routeId, arguments.getGroup(), keyBy, arguments.getHeader(),
				cost, usage));
		String protect = arguments.getProtect();
		violations.addAll(RouteArgumentRules.validateProtection(this.limitResolver.effectiveProperties(),
				"route '" + routeId + "' RateLimit", protect, arguments.getPriority() != null));
		if (protect != null && violations.isEmpty() && this.protections.get(protect.strip()) == null) {
			violations.add(new ConfigurationViolation("route '" + routeId + "' RateLimit.args.protect",
					"names protection '" + protect + "', which was added after start-up.",
					"restart the gateway to build new protections."));
		}
		return violations;
	}

	/**
	 * The limits in force, as one object that a reload replaces: a front end that keeps a route's settings resolves
	 * them again when this changes (a group's {@code critical} or {@code shadow} may have changed).
	 * @return the validated properties in force; compared by identity
	 */
	public Object limitsInForce() {
		return this.limitResolver.effectiveProperties();
	}

	/**
	 * The resolved settings of every route built so far, by route id.
	 * @return an unmodifiable snapshot
	 */
	public Map<String, RouteLimitSettings> routeSettings() {
		return Map.copyOf(this.routes);
	}

	@Override
	public String toString() {
		return "RateLimitRoutes[" + this.routes.size() + " routes]";
	}

}
