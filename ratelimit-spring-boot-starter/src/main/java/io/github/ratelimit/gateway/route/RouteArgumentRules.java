package io.github.ratelimit.gateway.route;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.properties.RateLimitPropertiesValidator;
import org.jspecify.annotations.Nullable;

/**
 * The rules of the {@code RateLimit} filter's arguments, the same for both front ends, checked against the
 * {@code ratelimit.*} properties: only known argument names; {@code key-by} {@code api-key}, {@code ip},
 * {@code principal} or {@code header}; {@code header} a header field name, given with {@code key-by: header} and
 * only then; {@code cost} a whole number of at least 1 that fits every limit that can apply;
 * {@code critical}/{@code shadow} {@code true} or {@code false}; a named group that the properties know. All
 * problems are collected, each naming the route's filter property and its fix.
 *
 * <p>Two moments: at start-up and on every reload, over the raw filter arguments of the configured routes
 * ({@link #validateFilterArgs}, called by each front end's route validator); and when a front end builds a route's
 * filter, over its bound arguments (routes from any source, e.g. Java), against the limits in force
 * ({@link #validateFilter}).
 */
public final class RouteArgumentRules {

	/** The key Gateway (both servers) gives the first value of a shortcut ({@code RateLimit=search}). */
	public static final String FIRST_SHORTCUT_KEY = "_genkey_0";

	private RouteArgumentRules() {
	}

	/**
	 * Check the raw arguments of one configured {@code RateLimit} filter.
	 * @param p the rate limit properties, already found valid by {@link RateLimitPropertiesValidator}
	 * @param property the filter's property, e.g. {@code spring.cloud.gateway.server.webflux.routes[0].filters[1]}
	 * @param routeId the route's id, or {@code null} when it has none
	 * @param args the arguments as written (names in any relaxed form, values as text)
	 * @param v where the problems found are added, each named after {@code <property>.args.<name>}
	 */
	public static void validateFilterArgs(RateLimitProperties p, String property, @Nullable String routeId,
			Map<String, ?> args, List<ConfigurationViolation> v) {
		String group = null;
		String keyBy = null;
		String header = null;
		String cost = null;
		String critical = null;
		String shadow = null;
		for (Map.Entry<String, ?> arg : args.entrySet()) {
			String value = (arg.getValue() != null) ? arg.getValue().toString() : null;
			String name = arg.getKey().replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
			if (arg.getKey().equals(FIRST_SHORTCUT_KEY) || name.equals("group")) {
				group = value;
			}
			else if (name.equals("keyby")) {
				keyBy = value;
			}
			else if (name.equals("header")) {
				header = value;
			}
			else if (name.equals("cost")) {
				cost = value;
			}
			else if (name.equals("critical")) {
				critical = value;
			}
			else if (name.equals("shadow")) {
				shadow = value;
			}
			else {
				v.add(new ConfigurationViolation(property + ".args." + arg.getKey(), "is not an argument of RateLimit.",
						"use group, key-by, header, cost, critical or shadow."));
			}
		}
		KeyBy parsedKeyBy = KeyBy.API_KEY;
		if (keyBy != null) {
			parsedKeyBy = KeyBy.parse(keyBy);
			if (parsedKeyBy == null) {
				v.add(new ConfigurationViolation(property + ".args.key-by",
						"must be api-key, ip, principal or header, was '" + keyBy + "'.",
						"use key-by: api-key (the default), ip, principal, or header with header: <name>."));
				parsedKeyBy = null;
			}
		}
		if (parsedKeyBy != null) {
			v.addAll(validateHeader(property, routeId, parsedKeyBy, header));
		}
		Long parsedCost = 1L;
		if (cost != null) {
			parsedCost = parseLong(cost);
			if (parsedCost == null || parsedCost < 1) {
				v.add(new ConfigurationViolation(property + ".args.cost",
						"must be a whole number of tokens of at least 1, was '" + cost + "'.",
						"use a cost of 1 or more, or remove it (default 1)."));
				parsedCost = null;
			}
		}
		if (critical != null && !critical.equalsIgnoreCase("true") && !critical.equalsIgnoreCase("false")) {
			v.add(new ConfigurationViolation(property + ".args.critical", "must be true or false, was '" + critical + "'.",
					"use critical: true for routes that must fail closed."));
		}
		if (shadow != null && !shadow.equalsIgnoreCase("true") && !shadow.equalsIgnoreCase("false")) {
			v.add(new ConfigurationViolation(property + ".args.shadow", "must be true or false, was '" + shadow + "'.",
					"use shadow: true to observe the route's limits without enforcing them."));
		}
		KeyBy routeKeyBy = (parsedKeyBy != null) ? parsedKeyBy : KeyBy.API_KEY;
		v.addAll(validateRoute(p, property, group, routeId, routeKeyBy, parsedCost));
	}

	/**
	 * The {@code header} argument: required with {@code key-by: header} and refused with any other, a header field
	 * name (RFC 9110 section 5.1: a token).
	 * @param property the filter's property, to name the argument after
	 * @param routeId the route, named in the problem
	 * @param keyBy what the route limits by
	 * @param header the argument's value, {@code null} when not given
	 * @return the problems found, at most one
	 */
	private static List<ConfigurationViolation> validateHeader(String property, @Nullable String routeId, KeyBy keyBy,
			@Nullable String header) {
		String route = "route '" + routeId + "'";
		if (keyBy == KeyBy.HEADER) {
			if (header == null || header.isBlank()) {
				return List.of(new ConfigurationViolation(property + ".args.header",
						"is missing: " + route + " limits by header (key-by: header) but names no header.",
						"name the request header whose value identifies the client, e.g. header: X-Tenant-Id."));
			}
			if (!isToken(header.strip())) {
				return List.of(new ConfigurationViolation(property + ".args.header",
						"of " + route + " must be a header field name (letters, digits and !#$%&'*+-.^_`|~), was '"
								+ header + "'.",
						"name the request header whose value identifies the client, e.g. header: X-Tenant-Id."));
			}
			return List.of();
		}
		if (header != null) {
			return List.of(new ConfigurationViolation(property + ".args.header",
					"applies only with key-by: header, but " + route + " limits by "
							+ keyBy.name().toLowerCase(Locale.ROOT).replace('_', '-') + ".",
					"remove header, or set key-by: header to limit by that header's value."));
		}
		return List.of();
	}

	/** Whether a value is an HTTP token (RFC 9110 section 5.6.2), as a field name must be. */
	private static boolean isToken(String value) {
		if (value.isEmpty()) {
			return false;
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean alphaNumeric = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
			if (!alphaNumeric && "!#$%&'*+-.^_`|~".indexOf(c) < 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Check the arguments of one route's filter as the factory builds it (a front end),
	 * for a route that names no header: see
	 * {@link #validateFilter(RateLimitProperties, String, String, KeyBy, String, long)}.
	 * @param limits the rate limit properties in force (validated)
	 * @param routeId the route id, or {@code null}
	 * @param explicitGroup the group the route names, or {@code null} (or blank) when it uses its route id
	 * @param keyBy what the route limits by
	 * @param cost tokens per request
	 * @return the problems found, named after {@code route '<id>' RateLimit}; empty when valid
	 */
	public static List<ConfigurationViolation> validateFilter(RateLimitProperties limits, @Nullable String routeId,
			@Nullable String explicitGroup, KeyBy keyBy, long cost) {
		return validateFilter(limits, routeId, explicitGroup, keyBy, null, cost);
	}

	/**
	 * Check the arguments of one route's filter as the factory builds it (a front end):
	 * the route has a group (its own or its id), the cost is at least 1 and fits every limit that can apply, a named
	 * group is known, and a header is named with {@code key-by: header} and only then.
	 * @param limits the rate limit properties in force (validated)
	 * @param routeId the route id, or {@code null}
	 * @param explicitGroup the group the route names, or {@code null} (or blank) when it uses its route id
	 * @param keyBy what the route limits by
	 * @param header the header the route names, or {@code null}
	 * @param cost tokens per request
	 * @return the problems found, named after {@code route '<id>' RateLimit}; empty when valid
	 */
	public static List<ConfigurationViolation> validateFilter(RateLimitProperties limits, @Nullable String routeId,
			@Nullable String explicitGroup, KeyBy keyBy, @Nullable String header, long cost) {
		if ((explicitGroup == null || explicitGroup.isBlank()) && routeId == null) {
			return List.of(new ConfigurationViolation("RateLimit.group", "the route has neither a group nor a route id.",
					"give the filter a group."));
		}
		List<ConfigurationViolation> headerViolations = validateHeader("route '" + routeId + "' RateLimit", routeId,
				keyBy, header);
		if (!headerViolations.isEmpty()) {
			return headerViolations;
		}
		if (cost < 1) {
			return List.of(new ConfigurationViolation("route '" + routeId + "' RateLimit.cost",
					"must be at least 1, was " + cost + ".", "use a cost of 1 or more."));
		}
		return validateRoute(limits, "route '" + routeId + "' RateLimit", explicitGroup, routeId, keyBy, cost);
	}

	/**
	 * Check one route's rate limit settings against the plans: an explicitly named group must be known, and the
	 * cost must fit in every limit that can apply (all plans on api-key and principal routes; the anonymous plan on
	 * ip routes; the anonymous and header plans on header routes).
	 * @param p the (valid) rate limit properties
	 * @param property the name to report problems under
	 * @param explicitGroup the group the route names, or {@code null} when it uses its route id
	 * @param routeId the route id (the group when none is named), or {@code null}
	 * @param keyBy what the route limits by
	 * @param cost tokens per request, or {@code null} if already reported invalid
	 * @return the problems found
	 */
	private static List<ConfigurationViolation> validateRoute(RateLimitProperties p, String property,
			@Nullable String explicitGroup, @Nullable String routeId, KeyBy keyBy, @Nullable Long cost) {
		List<ConfigurationViolation> v = new ArrayList<>();
		Set<String> known = RateLimitPropertiesValidator.knownGroups(p);
		if (explicitGroup != null && !known.contains(explicitGroup)) {
			v.add(new ConfigurationViolation(property + ".args.group",
					"names endpoint group '" + explicitGroup + "', which no plan and no ratelimit.groups entry defines.",
					"declare it (ratelimit.groups." + explicitGroup + ".critical: false, or limits under "
							+ "ratelimit.plans.<plan>.groups." + explicitGroup + "), fix the name (known: "
							+ new TreeSet<>(known) + "), or drop group to use the route id."));
		}
		if (cost != null) {
			String group = (explicitGroup != null) ? explicitGroup : routeId;
			for (Map.Entry<String, RateLimitProperties.Plan> plan : p.getPlans().entrySet()) {
				if (keyBy == KeyBy.IP && !plan.getKey().equals(p.getAnonymousPlan())) {
					continue;
				}
				if (keyBy == KeyBy.HEADER && !plan.getKey().equals(p.getAnonymousPlan())
						&& !plan.getKey().equals(p.getHeaderPlan())) {
					continue;
				}
				List<RateLimitProperties.Limit> limits = (group != null) ? plan.getValue().getGroups().get(group)
						: null;
				if (limits == null || limits.isEmpty()) {
					limits = plan.getValue().getDefault();
				}
				for (RateLimitProperties.Limit limit : limits) {
					if (!limit.isConcurrency() && cost > limit.getCapacity()) { // a slot is one, whatever the cost
						v.add(new ConfigurationViolation(property + ".args.cost",
								"is " + cost + " tokens, more than the capacity " + limit.getCapacity()
										+ " of a limit of plan '" + plan.getKey() + "': such requests could never pass.",
								"lower the cost or raise the capacity to at least " + cost + "."));
						return v;
					}
				}
			}
		}
		return v;
	}

	private static @Nullable Long parseLong(String value) {
		try {
			return Long.valueOf(value.strip());
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
