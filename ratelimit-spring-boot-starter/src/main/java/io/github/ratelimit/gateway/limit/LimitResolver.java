package io.github.ratelimit.gateway.limit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.config.RateLimitProperties;

/**
 * Looks up the limits for a (plan, endpoint group) pair: the plan's list for the group if it has one, else the
 * plan's {@code default} list. Results are computed once per pair and cached; the set of pairs is bounded by the
 * configuration (plans × groups named by routes).
 */
public class LimitResolver {

	private final RateLimitProperties properties;

	private final Map<String, PlanLimits> cache = new ConcurrentHashMap<>();

	/**
	 * Create a resolver over validated properties.
	 * @param properties the bound and validated {@code ratelimit.*} properties
	 */
	public LimitResolver(RateLimitProperties properties) {
		this.properties = properties;
	}

	/**
	 * The limits for a plan in an endpoint group.
	 * @param plan a plan name defined under {@code ratelimit.plans}
	 * @param group an endpoint group name
	 * @return the limits, never {@code null}
	 * @throws IllegalArgumentException if the plan is not configured
	 */
	public PlanLimits limitsFor(String plan, String group) {
		return this.cache.computeIfAbsent(plan + '\u0000' + group, (k) -> resolve(plan, group));
	}

	/**
	 * Whether an endpoint group is configured as critical ({@code ratelimit.groups.<group>.critical}).
	 * @param group the endpoint group name
	 * @return whether the group fails closed
	 */
	public boolean isCriticalGroup(String group) {
		RateLimitProperties.Group settings = this.properties.getGroups().get(group);
		return settings != null && settings.isCritical();
	}

	/**
	 * Whether an endpoint group runs in shadow mode ({@code ratelimit.shadow-mode} or
	 * {@code ratelimit.groups.<group>.shadow}).
	 * @param group the endpoint group name
	 * @return whether decisions are only observed
	 */
	public boolean isShadowGroup(String group) {
		RateLimitProperties.Group settings = this.properties.getGroups().get(group);
		return this.properties.isShadowMode() || (settings != null && settings.isShadow());
	}

	private PlanLimits resolve(String plan, String group) {
		RateLimitProperties.Plan settings = this.properties.getPlans().get(plan);
		if (settings == null) {
			throw new IllegalArgumentException("Unknown plan '" + plan + "'");
		}
		List<RateLimitProperties.Limit> configured = settings.getGroups().get(group);
		if (configured == null || configured.isEmpty()) {
			configured = settings.getDefault();
		}
		List<BucketLimit> limits = new ArrayList<>(configured.size());
		for (RateLimitProperties.Limit limit : configured) {
			String name = (limit.getName() != null && !limit.getName().isBlank()) ? limit.getName()
					: defaultPolicyName(plan, group, limit, configured.size());
			limits.add(toBucketLimit(name, limit));
		}
		return new PlanLimits(plan, group, dedupeNames(limits));
	}

	/**
	 * The enforced form of a configured limit: window algorithms take {@code capacity} tokens per window, so their
	 * refill count is the capacity (whether {@code refill-tokens} was left out or set equal to it).
	 * @param name the policy name
	 * @param limit the validated configured limit
	 * @return the limit
	 */
	static BucketLimit toBucketLimit(String name, RateLimitProperties.Limit limit) {
		Algorithm algorithm = (limit.getAlgorithm() != null) ? limit.getAlgorithm() : Algorithm.TOKEN_BUCKET;
		LimitScope scope = (limit.getScope() != null) ? limit.getScope() : LimitScope.CLIENT;
		long refillTokens = algorithm.isWindow() ? limit.getCapacity() : limit.getRefillTokens();
		return new BucketLimit(name, limit.getCapacity(), refillTokens, limit.getRefillPeriod(), algorithm, scope);
	}

	/**
	 * {@code <plan>-<group>}, or {@code <group>-global} for a global limit (shared across plans, so not named after
	 * one), with {@code -<period>} appended when the list has several limits.
	 */
	private static String defaultPolicyName(String plan, String group, RateLimitProperties.Limit limit, int count) {
		String base = (limit.getScope() == LimitScope.GLOBAL) ? group + "-global" : plan + "-" + group;
		return (count == 1) ? base : base + "-" + periodLabel(limit.getRefillPeriod());
	}

	private static List<BucketLimit> dedupeNames(List<BucketLimit> limits) {
		Set<String> seen = new HashSet<>();
		List<BucketLimit> result = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			BucketLimit limit = limits.get(i);
			String name = limit.policyName();
			if (!seen.add(name)) {
				name = name + "-" + (i + 1);
				seen.add(name);
			}
			result.add(limit.withPolicyName(name));
		}
		return result;
	}

	/**
	 * A short label for a period: {@code 1s}, {@code 15m}, {@code 1h}, {@code 1d}, else milliseconds
	 * ({@code 250ms}).
	 * @param period the period
	 * @return the label
	 */
	static String periodLabel(Duration period) {
		long ms = period.toMillis();
		if (ms % 86_400_000L == 0) {
			return (ms / 86_400_000L) + "d";
		}
		if (ms % 3_600_000L == 0) {
			return (ms / 3_600_000L) + "h";
		}
		if (ms % 60_000L == 0) {
			return (ms / 60_000L) + "m";
		}
		if (ms % 1000L == 0) {
			return (ms / 1000L) + "s";
		}
		return ms + "ms";
	}

}
