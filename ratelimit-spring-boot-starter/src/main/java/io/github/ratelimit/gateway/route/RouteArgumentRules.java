package io.github.ratelimit.gateway.route;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.limits.LimitDefinition;
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
		String usage = null;
		String reserve = null;
		String reserveMax = null;
		String countWhen = null;
		String protect = null;
		String priority = null;
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
			else if (name.equals("usage")) {
				usage = value;
			}
			else if (name.equals("reserve")) {
				reserve = value;
			}
			else if (name.equals("reservemax")) {
				reserveMax = value;
			}
			else if (name.equals("countwhen")) {
				countWhen = value;
			}
			else if (name.equals("protect")) {
				protect = value;
			}
			else if (name.equals("priority")) {
				priority = value;
			}
			else {
				v.add(new ConfigurationViolation(property + ".args." + arg.getKey(), "is not an argument of RateLimit.",
						"use group, key-by, header, cost, critical, shadow, usage, reserve, reserve-max, count-when, "
								+ "protect or priority."));
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
		Long parsedReserveMax = null;
		boolean reserveMaxValid = true;
		if (reserveMax != null) {
			parsedReserveMax = parseLong(reserveMax);
			if (parsedReserveMax == null) {
				v.add(new ConfigurationViolation(property + ".args.reserve-max",
						"must be a whole number of units, was '" + reserveMax + "'.",
						"remove it (default: the smallest capacity of the group's limits counting usage) or set 1 or "
								+ "more."));
				reserveMaxValid = false;
			}
		}
		if (priority != null) {
			if (Priority.parse(priority) == null) {
				v.add(new ConfigurationViolation(property + ".args.priority",
						"must be critical, high, normal or low, was '" + priority + "'.",
						"use priority: critical for routes that must pass first (login, checkout), or remove it to use "
								+ "each plan's priority."));
			}
		}
		v.addAll(validateProtection(p, property, protect, priority != null));
		RouteUsage routeUsage = RouteUsage.parse(usage, reserve, parsedReserveMax, countWhen, property, v);
		KeyBy routeKeyBy = (parsedKeyBy != null) ? parsedKeyBy : KeyBy.API_KEY;
		v.addAll(validateRoute(p, property, group, routeId, routeKeyBy, parsedCost,
				reserveMaxValid ? routeUsage : null));
	}

	/**
	 * The {@code protect} and {@code priority} arguments: {@code protect} names a protection under
	 * {@code ratelimit.protections}; {@code priority} is given only with {@code protect}.
	 * @param p the rate limit properties
	 * @param property the filter's property (or {@code route '<id>' RateLimit}), to name the arguments after
	 * @param protect the {@code protect} argument, {@code null} when not given
	 * @param priorityGiven whether the {@code priority} argument is given
	 * @return the problems found
	 */
	public static List<ConfigurationViolation> validateProtection(RateLimitProperties p, String property,
			@Nullable String protect, boolean priorityGiven) {
		List<ConfigurationViolation> v = new ArrayList<>();
		if (protect == null) {
			if (priorityGiven) {
				v.add(new ConfigurationViolation(property + ".args.priority",
						"is given without protect: a priority orders requests only in an upstream protection.",
						"add protect: <name of a ratelimit.protections entry>, or remove priority."));
			}
			return v;
		}
		if (!p.getProtections().containsKey(protect.strip())) {
			v.add(new ConfigurationViolation(property + ".args.protect",
					"names protection '" + protect + "', which ratelimit.protections does not define.",
					"declare it (ratelimit.protections." + protect.strip() + ".limit: adaptive) or fix the name (known: "
							+ new TreeSet<>(p.getProtections().keySet()) + ")."));
		}
		return v;
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
	static boolean isToken(String value) {
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
		return validateFilter(limits, routeId, explicitGroup, keyBy, header, cost, RouteUsage.NONE);
	}

	/**
	 * Check the arguments of one route's filter as the factory builds it (a front end), with its usage arguments:
	 * see {@link #validateFilter(RateLimitProperties, String, String, KeyBy, String, long)}, and the usage rules of
	 * {@link RouteUsage}: {@code usage} set exactly when a limit that can apply counts usage, {@code reserve-max}
	 * within every such limit's capacity, {@code count-when} only on groups without leases.
	 * @param limits the rate limit properties in force (validated)
	 * @param routeId the route id, or {@code null}
	 * @param explicitGroup the group the route names, or {@code null} (or blank) when it uses its route id
	 * @param keyBy what the route limits by
	 * @param header the header the route names, or {@code null}
	 * @param cost tokens per request
	 * @param usage the route's parsed usage arguments (see {@link RouteUsage#parse})
	 * @return the problems found, named after {@code route '<id>' RateLimit}; empty when valid
	 */
	static List<ConfigurationViolation> validateFilter(RateLimitProperties limits, @Nullable String routeId,
			@Nullable String explicitGroup, KeyBy keyBy, @Nullable String header, long cost, RouteUsage usage) {
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
		return validateRoute(limits, "route '" + routeId + "' RateLimit", explicitGroup, routeId, keyBy, cost, usage);
	}

	/**
	 * Check one route's rate limit settings against the plans: an explicitly named group must be known, the cost
	 * must fit in every limit counting requests that can apply (all plans on api-key and principal routes; the
	 * anonymous plan on ip routes; the anonymous and header plans on header routes), and the usage arguments must
	 * fit the limits counting usage that can apply.
	 * @param p the (valid) rate limit properties
	 * @param property the name to report problems under
	 * @param explicitGroup the group the route names, or {@code null} when it uses its route id
	 * @param routeId the route id (the group when none is named), or {@code null}
	 * @param keyBy what the route limits by
	 * @param cost tokens per request, or {@code null} if already reported invalid
	 * @param usage the route's usage arguments, or {@code null} if already reported invalid
	 * @return the problems found
	 */
	private static List<ConfigurationViolation> validateRoute(RateLimitProperties p, String property,
			@Nullable String explicitGroup, @Nullable String routeId, KeyBy keyBy, @Nullable Long cost,
			@Nullable RouteUsage usage) {
		List<ConfigurationViolation> v = new ArrayList<>();
		Set<String> known = RateLimitPropertiesValidator.knownGroups(p);
		if (explicitGroup != null && !known.contains(explicitGroup)) {
			v.add(new ConfigurationViolation(property + ".args.group",
					"names endpoint group '" + explicitGroup + "', which no plan and no ratelimit.groups entry defines.",
					"declare it (ratelimit.groups." + explicitGroup + ".critical: false, or limits under "
							+ "ratelimit.plans.<plan>.groups." + explicitGroup + "), fix the name (known: "
							+ new TreeSet<>(known) + "), or drop group to use the route id."));
		}
		String group = (explicitGroup != null) ? explicitGroup : routeId;
		Map<String, List<RateLimitProperties.Limit>> applying = applyingLimits(p, group, keyBy);
		if (cost != null) {
			for (Map.Entry<String, List<RateLimitProperties.Limit>> plan : applying.entrySet()) {
				for (RateLimitProperties.Limit limit : plan.getValue()) {
					// a slot is one, whatever the cost; a limit counting usage takes the reservation
					if (!limit.isConcurrency() && !isUsage(limit) && cost > limit.maxTokens()) {
						v.add(new ConfigurationViolation(property + ".args.cost",
								"is " + cost + " tokens, more than the capacity " + limit.maxTokens()
										+ " of a limit of plan '" + plan.getKey() + "': such requests could never pass.",
								"lower the cost or raise the " + (limit.isQuota() ? "quota's limit" : "capacity") + " to at least "
										+ cost + "."));
						return v;
					}
				}
			}
		}
		if (usage != null) {
			v.addAll(validateUsage(property, group, applying, usage));
		}
		return v;
	}

	/** The usage arguments against the limits that can apply, by plan. */
	private static List<ConfigurationViolation> validateUsage(String property, @Nullable String group,
			Map<String, List<RateLimitProperties.Limit>> applying, RouteUsage usage) {
		String counting = null;
		boolean leased = false;
		for (Map.Entry<String, List<RateLimitProperties.Limit>> plan : applying.entrySet()) {
			for (RateLimitProperties.Limit limit : plan.getValue()) {
				leased |= limit.getLease() != null && !limit.getLease().isOff();
				if (isUsage(limit)) {
					if (usage.usage() != null && usage.reserveMax() > limit.maxTokens()) {
						return List.of(new ConfigurationViolation(property + ".args.reserve-max",
								"is " + usage.reserveMax() + " units, more than the capacity " + limit.maxTokens()
										+ " of a limit of plan '" + plan.getKey() + "' in " + limit.getUnit()
										+ ": such requests could never pass.",
								"lower reserve-max or raise the capacity to at least " + usage.reserveMax() + "."));
					}
					if (usage.reserve() instanceof RouteUsage.Reserve.Fixed fixed && fixed.units() > limit.maxTokens()) {
						return List.of(new ConfigurationViolation(property + ".args.reserve",
								"is " + fixed.units() + " units, more than the capacity " + limit.maxTokens()
										+ " of a limit of plan '" + plan.getKey() + "' in " + limit.getUnit()
										+ ": such requests could never pass.",
								"lower reserve or raise the capacity to at least " + fixed.units() + "."));
					}
					counting = (counting != null) ? counting : limit.getUnit() + "' in plan '" + plan.getKey();
				}
			}
		}
		if (usage.usage() == null && counting != null) {
			return List.of(new ConfigurationViolation(property + ".args.usage",
					"is missing: endpoint group '" + group + "' counts '" + counting
							+ "', which only an answer tells.",
					"say where an answer's usage is read, e.g. usage: json:usage.total_tokens, usage: "
							+ "header:X-Usage or usage: bytes."));
		}
		if (usage.usage() != null && counting == null) {
			return List.of(new ConfigurationViolation(property + ".args.usage",
					"is set, but no limit of endpoint group '" + group + "' that can apply counts usage.",
					"give the group a limit with a unit (e.g. unit: tokens), or remove usage."));
		}
		if (usage.countWhen() != null && leased) {
			return List.of(new ConfigurationViolation(property + ".args.count-when",
					"is set, but a limit of endpoint group '" + group + "' takes leases: a leased request is decided "
							+ "here, and could not be given back.",
					"remove lease from the group's limits, or remove count-when."));
		}
		return List.of();
	}

	/**
	 * The smallest capacity of the limits counting usage that can apply to a route.
	 * @param p the (valid) rate limit properties
	 * @param group the route's group
	 * @param keyBy what the route limits by
	 * @return the smallest capacity in units; {@link LimitDefinition#MAX_TOKENS} when no limit counts usage
	 */
	static long smallestUsageCapacity(RateLimitProperties p, String group, KeyBy keyBy) {
		long smallest = LimitDefinition.MAX_TOKENS;
		for (List<RateLimitProperties.Limit> limits : applyingLimits(p, group, keyBy).values()) {
			for (RateLimitProperties.Limit limit : limits) {
				if (isUsage(limit)) {
					smallest = Math.min(smallest, limit.maxTokens());
				}
			}
		}
		return smallest;
	}

	/** The limits of a group that can apply to a route, by plan (see {@link #validateRoute}). */
	private static Map<String, List<RateLimitProperties.Limit>> applyingLimits(RateLimitProperties p,
			@Nullable String group, KeyBy keyBy) {
		Map<String, List<RateLimitProperties.Limit>> applying = new LinkedHashMap<>();
		for (Map.Entry<String, RateLimitProperties.Plan> plan : p.getPlans().entrySet()) {
			if (keyBy == KeyBy.IP && !plan.getKey().equals(p.getAnonymousPlan())) {
				continue;
			}
			if (keyBy == KeyBy.HEADER && !plan.getKey().equals(p.getAnonymousPlan())
					&& !plan.getKey().equals(p.getHeaderPlan())) {
				continue;
			}
			List<RateLimitProperties.Limit> limits = (group != null) ? plan.getValue().getGroups().get(group) : null;
			if (limits == null || limits.isEmpty()) {
				limits = plan.getValue().getDefault();
			}
			applying.put(plan.getKey(), limits);
		}
		return applying;
	}

	private static boolean isUsage(RateLimitProperties.Limit limit) {
		return !limit.isConcurrency() && !LimitDefinition.REQUESTS.equals(limit.getUnit());
	}

	static @Nullable Long parseLong(String value) {
		try {
			return Long.valueOf(value.strip());
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
