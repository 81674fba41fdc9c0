package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import org.jspecify.annotations.Nullable;

/**
 * The rules of the {@code ratelimit.*} properties: each value in its range, plans and their limits, the plans that
 * API keys, anonymous clients, principals ({@code principal.default-plan}) and header clients ({@code header-plan})
 * map to, and global limits that every plan giving them to an endpoint group agrees
 * on. All problems are collected, so that one failed start-up (or refused reload) reports them together, each
 * naming the property and its fix.
 *
 * <p>The arguments of the routes' {@code RateLimit} filters are checked against these properties by the filter's
 * own validator ({@code filter.RateLimitRouteValidator}, seen here as a {@link RouteArgumentsValidator}); the
 * start-up check ({@link RateLimitConfigurationCheck}) and the reload ({@link LimitReloader}) run both.
 */
public final class RateLimitPropertiesValidator {

	/** Longest refill period accepted (3650 days). */
	static final Duration MAX_PERIOD = Duration.ofDays(3650);

	/** Largest max-request-duration of a concurrency limit. */
	static final Duration MAX_REQUEST_DURATION = Duration.ofDays(7);

	/** Largest max-in-flight of a concurrency limit: Redis keeps one sorted-set entry per request in flight. */
	static final long MAX_IN_FLIGHT = 1_000_000;

	private RateLimitPropertiesValidator() {
	}

	/**
	 * Check the {@code ratelimit.*} properties on their own: every value in its range, plans with limits, the
	 * anonymous plan and the API keys' plans defined, and the plans agreeing on each endpoint group's global limits.
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
		for (Map.Entry<String, RateLimitProperties.Plan> plan : p.getPlans().entrySet()) {
			String planProperty = prefix + "plans." + plan.getKey();
			RateLimitProperties.Plan settings = plan.getValue();
			if (settings.getDefault() == null || settings.getDefault().isEmpty()) {
				v.add(new ConfigurationViolation(planProperty + ".default", "the plan has no default limits.",
						"give the plan at least one default limit (capacity, refill-tokens, refill-period); "
								+ "it applies to every endpoint group the plan does not list."));
			}
			else {
				validateLimits(planProperty + ".default", settings.getDefault(), v);
			}
			for (Map.Entry<String, List<RateLimitProperties.Limit>> group : settings.getGroups().entrySet()) {
				String groupProperty = planProperty + ".groups." + group.getKey();
				if (group.getValue() == null || group.getValue().isEmpty()) {
					v.add(new ConfigurationViolation(groupProperty, "the list of limits is empty.",
							"give the group at least one limit, or remove it to use the plan's default limits."));
				}
				else {
					validateLimits(groupProperty, group.getValue(), v);
				}
			}
		}
		validateGlobalLimits(p, v);
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

	private static void validateLimits(String property, List<RateLimitProperties.Limit> limits,
			List<ConfigurationViolation> v) {
		for (int i = 0; i < limits.size(); i++) {
			String at = property + "[" + i + "]";
			RateLimitProperties.Limit limit = limits.get(i);
			if (limit.getType() == null) {
				v.add(new ConfigurationViolation(at + ".type", "must be set.",
						"use rate (the default: tokens per time) or concurrency (requests in flight at once)."));
			}
			else if (limit.isConcurrency()) {
				validateConcurrencyLimit(at, limit, v);
				continue;
			}
			if (limit.getMaxInFlight() != 0 || limit.getMaxRequestDuration() != null) {
				v.add(new ConfigurationViolation(
						at + ((limit.getMaxInFlight() != 0) ? ".max-in-flight" : ".max-request-duration"),
						"applies to concurrency limits only, and this limit has type rate.",
						"add type: concurrency to limit requests in flight (and leave capacity, refill-tokens and "
								+ "refill-period out), or remove it."));
			}
			Algorithm algorithm = limit.getAlgorithm();
			if (algorithm == Algorithm.CONCURRENCY) {
				v.add(new ConfigurationViolation(at + ".algorithm", "is concurrency, which is a type, not an algorithm.",
						"write type: concurrency with max-in-flight and max-request-duration instead."));
				continue;
			}
			if (algorithm == null) {
				v.add(new ConfigurationViolation(at + ".algorithm", "must be set.",
						"use token-bucket (the default), sliding-window-log, sliding-window-counter or fixed-window."));
				algorithm = Algorithm.TOKEN_BUCKET;
			}
			if (limit.getScope() == null) {
				v.add(new ConfigurationViolation(at + ".scope", "must be set.",
						"use client (the default: one bucket per client) or global (one bucket shared by every "
								+ "client of the endpoint group)."));
			}
			if (limit.getCapacity() < 1 || limit.getCapacity() > LimitDefinition.MAX_TOKENS) {
				v.add(new ConfigurationViolation(at + ".capacity",
						"must be between 1 and 2^53 tokens, was " + limit.getCapacity() + ".",
						algorithm.isWindow()
								? "set how many tokens (requests) a client may spend per refill-period window, at least 1."
								: "set the largest burst the client may send, at least 1 (0 would refuse every request)."));
			}
			else if (algorithm == Algorithm.SLIDING_WINDOW_LOG && limit.getCapacity() > LimitDefinition.MAX_LOG_CAPACITY) {
				v.add(new ConfigurationViolation(at + ".capacity",
						"must be at most 1,000,000 tokens with sliding-window-log (it keeps one Redis entry per "
								+ "admitted token for a whole window), was " + limit.getCapacity() + ".",
						"use algorithm: sliding-window-counter (two counters per client, approximate) or token-bucket "
								+ "for limits this large."));
			}
			if (algorithm.isWindow()) {
				// a window admits capacity tokens per window: refill-tokens is implied (0 = left out) or must agree
				if (limit.getRefillTokens() != 0 && limit.getRefillTokens() != limit.getCapacity()) {
					v.add(new ConfigurationViolation(at + ".refill-tokens",
							"must equal capacity (" + limit.getCapacity() + ") or be left out with algorithm "
									+ algorithm.configName() + ", which admits capacity tokens per refill-period "
									+ "window; was " + limit.getRefillTokens() + ".",
							"remove refill-tokens (or set it to " + limit.getCapacity() + "); for a burst larger "
									+ "than the rate, use algorithm: token-bucket."));
				}
			}
			else if (limit.getRefillTokens() < 1 || limit.getRefillTokens() > LimitDefinition.MAX_TOKENS) {
				v.add(new ConfigurationViolation(at + ".refill-tokens",
						"must be between 1 and 2^53 tokens, was " + limit.getRefillTokens() + ".",
						"set how many tokens the bucket regains per refill-period, at least 1 "
								+ "(for slower rates lengthen refill-period, e.g. 1 per 1m)."));
			}
			double leaseBudget = LimitResolver.leaseBudgetPercent(limit.getLease());
			if (!(leaseBudget >= 0 && leaseBudget <= LimitDefinition.MAX_LEASE_BUDGET_PERCENT)) {
				v.add(new ConfigurationViolation(at + ".lease",
						"must be off or a percentage above 0% and at most 50% of the capacity, was '" + limit.getLease()
								+ "'.",
						"set e.g. lease: 2% (a lease holds at most 2% of the capacity), or leave it out."));
			}
			else if (leaseBudget > 0 && algorithm != Algorithm.TOKEN_BUCKET) {
				v.add(new ConfigurationViolation(at + ".lease",
						"applies to token buckets only, was '" + limit.getLease() + "' with " + algorithm.configName()
								+ ".",
						"remove lease, or use algorithm: token-bucket."));
			}
			Duration period = limit.getRefillPeriod();
			if (period == null) {
				v.add(new ConfigurationViolation(at + ".refill-period", "is missing.",
						"set a duration such as 1s, 1m, 15m or 1d."));
			}
			else if (period.toMillis() < 1 || period.compareTo(MAX_PERIOD) > 0) {
				v.add(new ConfigurationViolation(at + ".refill-period",
						"must be between 1ms and 3650d, was " + period + ".",
						"set a positive duration such as 1s, 1m, 15m or 1d."));
			}
			else if (algorithm == Algorithm.TOKEN_BUCKET && limit.getCapacity() >= 1 && limit.getRefillTokens() >= 1) {
				validateTokenBucketTime(at, limit, period, v);
			}
		}
	}

	/**
	 * A concurrency limit: max-in-flight slots, each freed at the latest after max-request-duration; the rate
	 * settings do not apply. Its scope may be client or global like any limit's.
	 */
	private static void validateConcurrencyLimit(String at, RateLimitProperties.Limit limit,
			List<ConfigurationViolation> v) {
		if (limit.getScope() == null) {
			v.add(new ConfigurationViolation(at + ".scope", "must be set.",
					"use client (the default: requests in flight per client) or global (requests in flight of the "
							+ "whole endpoint group)."));
		}
		if (limit.getMaxInFlight() < 1 || limit.getMaxInFlight() > MAX_IN_FLIGHT) {
			v.add(new ConfigurationViolation(at + ".max-in-flight",
					"must be between 1 and 1,000,000 requests, was " + limit.getMaxInFlight() + ".",
					"set how many requests may be in flight at once, at least 1 (Redis keeps one entry per "
							+ "request in flight)."));
		}
		Duration duration = limit.getMaxRequestDuration();
		if (duration != null && (duration.toMillis() < 1 || duration.compareTo(MAX_REQUEST_DURATION) > 0)) {
			v.add(new ConfigurationViolation(at + ".max-request-duration",
					"must be between 1ms and 7d, was " + duration + ".",
					"set the longest a request may run, e.g. 30s (the default); a slot never given back frees "
							+ "itself after it."));
		}
		String[] rateOnly = { (limit.getCapacity() != 0) ? "capacity" : null,
				(limit.getRefillTokens() != 0) ? "refill-tokens" : null,
				(limit.getRefillPeriod() != null) ? "refill-period" : null,
				(limit.getLease() != null) ? "lease" : null,
				(limit.getAlgorithm() != null && limit.getAlgorithm() != Algorithm.TOKEN_BUCKET) ? "algorithm" : null };
		for (String name : rateOnly) {
			if (name != null) {
				v.add(new ConfigurationViolation(at + "." + name,
						"applies to rate limits only, and this limit has type concurrency.",
						"remove " + name + " (a concurrency limit is max-in-flight and max-request-duration), or "
								+ "put the rate in a limit of its own in the same list."));
			}
		}
	}

	/**
	 * A token bucket is kept as one time in microseconds (the GCRA form, see the script): it can refill at most one
	 * token per microsecond, and must fill from empty within {@link LimitDefinition#MAX_FILL_TIME} (so that its time
	 * stays an exact integer).
	 */
	private static void validateTokenBucketTime(String at, RateLimitProperties.Limit limit, Duration period,
			List<ConfigurationViolation> v) {
		double microsPerToken = period.toNanos() / 1000.0 / limit.getRefillTokens();
		if (microsPerToken < 1) {
			v.add(new ConfigurationViolation(at + ".refill-tokens",
					"must be at most one token per microsecond of refill-period (1,000,000 per second), was "
							+ limit.getRefillTokens() + " per " + period + ".",
					"lower the rate, or count in larger units (e.g. a cost per kilobyte instead of per byte)."));
		}
		else if (limit.getCapacity() * microsPerToken > LimitDefinition.MAX_FILL_TIME.toNanos() / 1000.0) {
			v.add(new ConfigurationViolation(at + ".capacity",
					"must fill from empty within 36500 days at refill-tokens per refill-period, was " + limit.getCapacity()
							+ " at " + limit.getRefillTokens() + " per " + period + ".",
					"lower the capacity or raise the refill rate."));
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
			if (limit.getScope() == LimitScope.GLOBAL && limit.isConcurrency()) {
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

}
