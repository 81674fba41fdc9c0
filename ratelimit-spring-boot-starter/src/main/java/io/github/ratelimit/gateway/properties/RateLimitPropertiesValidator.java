package io.github.ratelimit.gateway.properties;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitScope;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Checks the {@code ratelimit.*} properties: the range rules declared on their fields ({@link PropertyRules}), each
 * list of limits ({@link LimitRules}), and the rules across properties: plans defined, with default limits; the
 * plans that anonymous clients, principals ({@code principal.default-plan}), header clients ({@code header-plan})
 * and API keys map to defined; the plans giving an endpoint group global limits agreeing on them. Every problem is
 * collected, so that one failed start-up (or refused reload) reports them together, each naming the property and
 * its fix. The routes' {@code RateLimit} arguments are checked by a {@link RouteArgumentsValidator}; the start-up
 * check ({@link RateLimitConfigurationCheck}) and the reload ({@link LimitReloader}) run both.
 */
public final class RateLimitPropertiesValidator {

	private RateLimitPropertiesValidator() {
	}

	/**
	 * Check the {@code ratelimit.*} properties on their own (without the routes).
	 * @param p the bound properties
	 * @return the problems found, one per offending property, in a stable order; empty when valid
	 */
	public static List<ConfigurationViolation> validate(RateLimitProperties p) {
		List<ConfigurationViolation> v = PropertyRules.check(p, RateLimitProperties.PREFIX);
		String prefix = RateLimitProperties.PREFIX + ".";
		Set<String> planNames = new TreeSet<>(p.getPlans().keySet());
		if (p.getPlans().isEmpty()) {
			v.add(new ConfigurationViolation(prefix + "plans", "no plan is defined.",
					"define at least the anonymous plan, e.g. ratelimit.plans.anonymous.default[0].capacity=60, "
							+ "refill-tokens=60, refill-period=1m."));
		}
		String anonymous = p.getAnonymousPlan();
		if (anonymous == null || anonymous.isBlank()) {
			v.add(new ConfigurationViolation(prefix + "anonymous-plan", "must not be empty.",
					"name the plan that applies to clients limited by IP address, one of " + planNames + "."));
		}
		else if (!p.getPlans().isEmpty() && !p.getPlans().containsKey(anonymous)) {
			v.add(new ConfigurationViolation(prefix + "anonymous-plan",
					"names plan '" + anonymous + "', which is not defined under ratelimit.plans.",
					"define ratelimit.plans." + anonymous + " or set anonymous-plan to one of " + planNames + "."));
		}
		validateOptionalPlan(p, prefix + "principal.default-plan", p.getPrincipal().getDefaultPlan(),
				"authenticated principals whose credentials name no configured plan", planNames, v);
		validateOptionalPlan(p, prefix + "header-plan", p.getHeaderPlan(),
				"clients identified by a request header (key-by: header)", planNames, v);
		if (p.getQuota().getZone() == null || LimitRules.quotaZone(p.getQuota().getZone()) == null) {
			v.add(new ConfigurationViolation(prefix + "quota.zone",
					"is '" + p.getQuota().getZone() + "', which names no time zone.",
					"use a region such as Europe/Berlin, UTC, or a fixed offset such as +03:28."
							+ yamlNumberHint(p.getQuota().getZone())));
		}
		if (p.getQuota().getFirstDayOfWeek() == null) {
			v.add(new ConfigurationViolation(prefix + "quota.first-day-of-week", "must be set.",
					"use the day a week quota starts on, e.g. monday (the default) or sunday."));
		}
		for (Map.Entry<String, RateLimitProperties.Plan> plan : p.getPlans().entrySet()) {
			String planProperty = prefix + "plans." + plan.getKey();
			RateLimitProperties.Plan settings = plan.getValue();
			if (settings.getQuotaZone() != null && LimitRules.quotaZone(settings.getQuotaZone()) == null) {
				v.add(new ConfigurationViolation(planProperty + ".quota-zone",
						"is '" + settings.getQuotaZone() + "', which names no time zone.",
						"use a region such as Europe/Berlin, UTC, or a fixed offset such as +03:28; leave it out to "
								+ "use ratelimit.quota.zone." + yamlNumberHint(settings.getQuotaZone())));
			}
			if (settings.getDefault() == null || settings.getDefault().isEmpty()) {
				v.add(new ConfigurationViolation(planProperty + ".default", "the plan has no default limits.",
						"give the plan at least one default limit (capacity, refill-tokens, refill-period); "
								+ "it applies to every endpoint group the plan does not list."));
			}
			else {
				LimitRules.check(planProperty + ".default", settings.getDefault(), v);
			}
			for (Map.Entry<String, List<RateLimitProperties.Limit>> group : settings.getGroups().entrySet()) {
				String groupProperty = planProperty + ".groups." + group.getKey();
				if (group.getValue() == null || group.getValue().isEmpty()) {
					v.add(new ConfigurationViolation(groupProperty, "the list of limits is empty.",
							"give the group at least one limit, or remove it to use the plan's default limits."));
				}
				else {
					LimitRules.check(groupProperty, group.getValue(), v);
				}
			}
		}
		validateGlobalLimits(p, v);
		ProtectionRules.check(p, v);
		DataSize bodyLimit = p.getUsage().getReserveBodyLimit();
		if (bodyLimit == null || bodyLimit.compareTo(RateLimitProperties.Usage.MIN_RESERVE_BODY_LIMIT) < 0
				|| bodyLimit.compareTo(RateLimitProperties.Usage.MAX_RESERVE_BODY_LIMIT) > 0) {
			v.add(new ConfigurationViolation(prefix + "usage.reserve-body-limit",
					"must be between 1KB and 16MB, was " + bodyLimit + ".",
					"set how much of a request body is read for its estimate, e.g. 64KB."));
		}
		for (Map.Entry<String, String> apiKey : p.getApiKeys().entrySet()) {
			String masked = prefix + "api-keys[" + ApiKeyHasher.mask(apiKey.getKey()) + "]";
			if (apiKey.getKey().isBlank()) {
				v.add(new ConfigurationViolation(prefix + "api-keys", "contains a blank API key.", "remove it."));
			}
			else if (apiKey.getValue() == null || !p.getPlans().containsKey(apiKey.getValue())) {
				v.add(new ConfigurationViolation(masked,
						"maps an API key to plan '" + apiKey.getValue() + "', which is not defined.",
						"map the key to one of " + planNames + "."));
			}
		}
		return v;
	}

	/** A plan property that may be left out (then the anonymous plan applies), but if set must name a plan. */
	private static void validateOptionalPlan(RateLimitProperties p, String property, @Nullable String plan, String whose,
			Set<String> planNames, List<ConfigurationViolation> v) {
		if (plan == null) {
			return;
		}
		if (plan.isBlank()) {
			v.add(new ConfigurationViolation(property, "must not be empty.",
					"name the plan of " + whose + ", one of " + planNames + ", or leave it out (the anonymous plan)."));
		}
		else if (!p.getPlans().isEmpty() && !p.getPlans().containsKey(plan)) {
			v.add(new ConfigurationViolation(property,
					"names plan '" + plan + "', which is not defined under ratelimit.plans.",
					"define ratelimit.plans." + plan + " or set "
							+ property.substring(RateLimitProperties.PREFIX.length() + 1) + " to one of " + planNames
							+ "."));
		}
	}

	/**
	 * A global limit is one bucket shared by every client of an endpoint group, whatever their plan: every plan that
	 * gives a group global limits must give it the same ones (else the shared bucket would be checked against
	 * different capacities from one request to the next). A plan without global limits for a group is allowed: its
	 * clients are then not counted in the group-wide quota.
	 */
	private static void validateGlobalLimits(RateLimitProperties p, List<ConfigurationViolation> v) {
		String prefix = RateLimitProperties.PREFIX + ".plans.";
		List<String> groups = new ArrayList<>(new TreeSet<>(knownGroups(p)));
		groups.add(null); // any group no plan lists: every plan's default list
		Set<String> reported = new HashSet<>();
		for (String group : groups) {
			String firstPlan = null;
			String firstProperty = null;
			List<String> first = null;
			for (Map.Entry<String, RateLimitProperties.Plan> plan : p.getPlans().entrySet()) {
				List<RateLimitProperties.Limit> limits = (group != null) ? plan.getValue().getGroups().get(group) : null;
				String property = prefix + plan.getKey() + ".groups." + group;
				if (limits == null || limits.isEmpty()) {
					limits = plan.getValue().getDefault();
					property = prefix + plan.getKey() + ".default";
				}
				List<String> global = globalLimits(limits);
				if (global.isEmpty()) {
					continue;
				}
				if (first == null) {
					firstPlan = plan.getKey();
					firstProperty = property;
					first = global;
				}
				else if (!first.equals(global) && reported.add(property)) {
					String where = (group != null) ? "endpoint group '" + group + "'"
							: "the endpoint groups no plan lists";
					v.add(new ConfigurationViolation(property,
							"gives " + where + " global limits " + global + " that differ from those of plan '"
									+ firstPlan + "' " + first + " (" + firstProperty + "): a global limit is one "
									+ "bucket shared by every client of the group, whatever their plan.",
							"give every plan the same scope: global limits for the group (capacity, refill-tokens, "
									+ "refill-period, algorithm, in the same order), or none."));
				}
			}
		}
	}

	/**
	 * Endpoint groups whose global limits only some plans carry: the clients of the other plans (often the anonymous
	 * plan) are not counted in the group-wide quota, which is legal but rarely what protecting a backend needs. One
	 * message per such group, for a warning at start-up.
	 * @param p the properties
	 * @return the messages, empty when every group's global limits are carried by every plan or by none
	 */
	public static List<String> globalLimitGaps(RateLimitProperties p) {
		String prefix = RateLimitProperties.PREFIX + ".plans.";
		List<String> groups = new ArrayList<>(new TreeSet<>(knownGroups(p)));
		groups.add(null);
		List<String> messages = new ArrayList<>();
		for (String group : groups) {
			List<String> with = new ArrayList<>();
			List<String> without = new ArrayList<>();
			for (Map.Entry<String, RateLimitProperties.Plan> plan : p.getPlans().entrySet()) {
				List<RateLimitProperties.Limit> limits = (group != null) ? plan.getValue().getGroups().get(group) : null;
				String property = prefix + plan.getKey() + ".groups." + group;
				if (limits == null || limits.isEmpty()) {
					limits = plan.getValue().getDefault();
					property = prefix + plan.getKey() + ".default";
				}
				(globalLimits(limits).isEmpty() ? without : with).add(property);
			}
			if (!with.isEmpty() && !without.isEmpty()) {
				String where = (group != null) ? "Endpoint group '" + group + "'" : "The endpoint groups no plan lists";
				messages.add(where + " has scope: global limits in " + with + " but none in " + without
						+ ": clients of those plans are not counted in the group-wide quota (an anonymous client "
						+ "passes a global cap its plan does not carry). Give those lists the same global limits to "
						+ "count every client.");
			}
		}
		return messages;
	}

	private static List<String> globalLimits(List<RateLimitProperties.Limit> limits) {
		List<String> global = new ArrayList<>();
		if (limits == null) {
			return global;
		}
		for (RateLimitProperties.Limit limit : limits) {
			if (limit.getScope() == LimitScope.GLOBAL && limit.isQuota()) {
				global.add("{type: quota, limit: " + limit.getLimit() + ", period: " + limit.getPeriod() + "}");
			}
			else if (limit.getScope() == LimitScope.GLOBAL && limit.isConcurrency()) {
				global.add("{type: concurrency, max-in-flight: " + limit.getMaxInFlight() + ", max-request-duration: "
						+ LimitResolver.maxRequestDuration(limit) + "}");
			}
			else if (limit.getScope() == LimitScope.GLOBAL) {
				Algorithm algorithm = (limit.getAlgorithm() != null) ? limit.getAlgorithm() : Algorithm.TOKEN_BUCKET;
				long refill = algorithm.isWindow() ? limit.getCapacity() : limit.getRefillTokens();
				global.add("{capacity: " + limit.getCapacity() + ", refill-tokens: " + refill + ", refill-period: "
						+ limit.getRefillPeriod() + ", algorithm: " + algorithm.configName() + "}");
			}
		}
		return global;
	}

	/**
	 * The endpoint groups the properties know: those with settings under {@code ratelimit.groups} and those a plan
	 * gives limits under {@code ratelimit.plans.<plan>.groups}.
	 * @param p the properties
	 * @return the group names, a new modifiable set
	 */
	public static Set<String> knownGroups(RateLimitProperties p) {
		Set<String> names = new HashSet<>(p.getGroups().keySet());
		p.getPlans().values().forEach((plan) -> names.addAll(plan.getGroups().keySet()));
		return names;
	}

	/**
	 * For a zone that is a whole number, what YAML 1.1 made of an unquoted offset: {@code +14:00} is read as the
	 * base-60 number 840 ({@code +5:30} as 330); else nothing.
	 */
	private static String yamlNumberHint(@Nullable String zone) {
		return (zone != null && zone.strip().matches("[+-]?\\d+"))
				? " An unquoted offset in YAML such as +14:00 is read as a base-60 number (840): quote it, "
						+ "zone: '+14:00'."
				: "";
	}

}
