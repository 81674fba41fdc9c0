package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.plan.KnownPlans;
import org.jspecify.annotations.Nullable;


/**
 * Looks up the limits for a (plan, endpoint group) pair: the plan's list for the group if it has one, else the
 * plan's {@code default} list. Results are computed once per pair and cached; the set of pairs is bounded by the
 * configuration (plans × groups named by routes).
 *
 * <p>Runtime changes: the resolver works from its own deep copy of the plans and group settings, taken at start-up
 * and again by {@link #reload()}, never from the live properties object. {@link #reload()} validates the current properties and, only if they are valid, swaps in a new
 * copy with an empty cache, so the next request sees the new limits; if not, the previous limits stay in force. The
 * auto-configuration calls it whenever the {@code ratelimit.*} properties bean has been re-bound (e.g. by
 * {@code /actuator/refresh} or an {@code EnvironmentChangeEvent}).
 */
public class LimitResolver implements KnownPlans {

	private final RateLimitProperties properties;

	private volatile Snapshot snapshot;

	/**
	 * Create a resolver over validated properties.
	 * @param properties the bound and validated {@code ratelimit.*} properties
	 */
	public LimitResolver(RateLimitProperties properties) {
		this.properties = properties;
		this.snapshot = new Snapshot(copyOf(properties));
	}

	/**
	 * The limits for a plan in an endpoint group.
	 * @param plan a plan name defined under {@code ratelimit.plans}
	 * @param group an endpoint group name
	 * @return the limits, never {@code null}
	 * @throws IllegalArgumentException if the plan is not configured
	 */
	public PlanLimits limitsFor(String plan, String group) {
		Snapshot current = this.snapshot;
		// by group, then plan: no key string built per request
		Map<String, PlanLimits> byPlan = current.cache.get(group);
		PlanLimits limits = (byPlan != null) ? byPlan.get(plan) : null;
		if (limits != null) {
			return limits;
		}
		return current.cache.computeIfAbsent(group, (g) -> new ConcurrentHashMap<>())
			.computeIfAbsent(plan, (p) -> resolve(current.properties, plan, group));
	}

	/**
	 * Take the current {@code ratelimit.*} properties into use, if they are valid: validate them and, when valid,
	 * replace the limits in force (the next {@link #limitsFor} call sees them). When invalid, nothing changes and
	 * the problems are returned for the caller to report; requests keep being limited by the previous limits.
	 * @return the problems found, empty when the new properties were taken into use
	 */
	public List<ConfigurationViolation> reload() {
		List<ConfigurationViolation> violations = RateLimitPropertiesValidator.validate(this.properties);
		if (violations.isEmpty()) {
			this.snapshot = new Snapshot(copyOf(this.properties));
		}
		return violations;
	}

	/**
	 * The configuration the limits in force come from: a copy of plans (with their priorities), groups, the
	 * anonymous, principal default and header plans, shadow mode and the protections as last validated (start-up or {@link #reload()}). Do not modify it.
	 * @return the properties in force
	 */
	public RateLimitProperties effectiveProperties() {
		return this.snapshot.properties;
	}

	/**
	 * Whether a plan is configured (in the limits in force).
	 * @param plan the plan name
	 * @return whether {@link #limitsFor} knows it
	 */
	public boolean isKnownPlan(String plan) {
		return this.snapshot.properties.getPlans().containsKey(plan);
	}

	@Override
	public boolean isKnown(String plan) {
		return isKnownPlan(plan);
	}

	/**
	 * The anonymous plan of the limits in force ({@code ratelimit.anonymous-plan}).
	 * @return the plan name
	 */
	@Override
	public String anonymousPlan() {
		return this.snapshot.properties.getAnonymousPlan();
	}

	/**
	 * The plan of principals whose credentials name no configured plan, in the limits in force
	 * ({@code ratelimit.principal.default-plan}, else the anonymous plan).
	 * @return the plan name
	 */
	@Override
	public String principalPlan() {
		RateLimitProperties current = this.snapshot.properties;
		String plan = current.getPrincipal().getDefaultPlan();
		return (plan != null) ? plan : current.getAnonymousPlan();
	}

	/**
	 * The plan of clients identified by a request header, in the limits in force ({@code ratelimit.header-plan},
	 * else the anonymous plan).
	 * @return the plan name
	 */
	@Override
	public String headerPlan() {
		RateLimitProperties current = this.snapshot.properties;
		return (current.getHeaderPlan() != null) ? current.getHeaderPlan() : current.getAnonymousPlan();
	}

	/**
	 * Whether an endpoint group is configured as critical ({@code ratelimit.groups.<group>.critical}).
	 * @param group the endpoint group name
	 * @return whether the group fails closed
	 */
	public boolean isCriticalGroup(String group) {
		RateLimitProperties.Group settings = this.snapshot.properties.getGroups().get(group);
		return settings != null && settings.isCritical();
	}

	/**
	 * Whether an endpoint group runs in shadow mode ({@code ratelimit.shadow-mode} or
	 * {@code ratelimit.groups.<group>.shadow}).
	 * @param group the endpoint group name
	 * @return whether decisions are only observed
	 */
	public boolean isShadowGroup(String group) {
		RateLimitProperties current = this.snapshot.properties;
		RateLimitProperties.Group settings = current.getGroups().get(group);
		return current.isShadowMode() || (settings != null && settings.isShadow());
	}

	private static PlanLimits resolve(RateLimitProperties properties, String plan, String group) {
		RateLimitProperties.Plan settings = properties.getPlans().get(plan);
		if (settings == null) {
			throw new IllegalArgumentException("Unknown plan '" + plan + "'");
		}
		List<RateLimitProperties.Limit> configured = settings.getGroups().get(group);
		if (configured == null || configured.isEmpty()) {
			configured = settings.getDefault();
		}
		List<LimitDefinition> limits = new ArrayList<>(configured.size());
		// a quota's name always says its period, so adding one does not rename the limits beside it
		int namedByPeriod = (int) configured.stream().filter((limit) -> !limit.isQuota()).count();
		for (RateLimitProperties.Limit limit : configured) {
			String name = (limit.getName() != null && !limit.getName().isBlank()) ? limit.getName()
					: defaultPolicyName(plan, group, limit, namedByPeriod);
			limits.add(toLimitDefinition(name, limit, properties.getQuota(), settings.getQuotaZone()));
		}
		return new PlanLimits(plan, group, dedupeNames(limits));
	}

	/** A deep copy of what limit lookups read, so later changes to the live properties object do not leak in. */
	private static RateLimitProperties copyOf(RateLimitProperties source) {
		RateLimitProperties copy = new RateLimitProperties();
		copy.setAnonymousPlan(source.getAnonymousPlan());
		copy.getPrincipal().setDefaultPlan(source.getPrincipal().getDefaultPlan());
		copy.setHeaderPlan(source.getHeaderPlan());
		copy.setShadowMode(source.isShadowMode());
		copy.getQuota().setZone(source.getQuota().getZone());
		copy.getQuota().setFirstDayOfWeek(source.getQuota().getFirstDayOfWeek());
		Map<String, RateLimitProperties.Plan> plans = new LinkedHashMap<>();
		source.getPlans().forEach((name, plan) -> {
			RateLimitProperties.Plan planCopy = new RateLimitProperties.Plan();
			planCopy.setDefault(copyOf(plan.getDefault()));
			planCopy.setQuotaZone(plan.getQuotaZone());
			planCopy.setPriority(plan.getPriority());
			Map<String, List<RateLimitProperties.Limit>> groups = new LinkedHashMap<>();
			plan.getGroups().forEach((group, limits) -> groups.put(group, copyOf(limits)));
			planCopy.setGroups(Collections.unmodifiableMap(groups));
			plans.put(name, planCopy);
		});
		copy.setPlans(Collections.unmodifiableMap(plans));
		Map<String, RateLimitProperties.Group> groups = new LinkedHashMap<>();
		source.getGroups().forEach((name, group) -> {
			RateLimitProperties.Group groupCopy = new RateLimitProperties.Group();
			groupCopy.setCritical(group.isCritical());
			groupCopy.setShadow(group.isShadow());
			groups.put(name, groupCopy);
		});
		copy.setGroups(Collections.unmodifiableMap(groups));
		// routes' protect arguments are checked against these names (the protections themselves are built once)
		copy.setProtections(Collections.unmodifiableMap(new LinkedHashMap<>(source.getProtections())));
		return copy;
	}

	private static List<RateLimitProperties.Limit> copyOf(List<RateLimitProperties.Limit> limits) {
		if (limits == null) {
			return List.of();
		}
		List<RateLimitProperties.Limit> copies = new ArrayList<>(limits.size());
		for (RateLimitProperties.Limit limit : limits) {
			RateLimitProperties.Limit copy = new RateLimitProperties.Limit();
			copy.setCapacity(limit.getCapacity());
			copy.setRefillTokens(limit.getRefillTokens());
			copy.setRefillPeriod(limit.getRefillPeriod());
			copy.setName(limit.getName());
			copy.setAlgorithm(limit.getAlgorithm());
			copy.setScope(limit.getScope());
			copy.setLease(limit.getLease());
			copy.setType(limit.getType());
			copy.setMaxInFlight(limit.getMaxInFlight());
			copy.setMaxRequestDuration(limit.getMaxRequestDuration());
			copy.setUnit(limit.getUnit());
			copy.setLimit(limit.getLimit());
			copy.setPeriod(limit.getPeriod());
			copies.add(copy);
		}
		return Collections.unmodifiableList(copies);
	}

	/** The limits in force: a copy of the properties and the limits resolved from it so far. */
	private static final class Snapshot {

		private final RateLimitProperties properties;

		private final Map<String, Map<String, PlanLimits>> cache = new ConcurrentHashMap<>();

		Snapshot(RateLimitProperties properties) {
			this.properties = properties;
		}

	}

	/**
	 * The enforced form of a configured limit: window algorithms take {@code capacity} tokens per window, so their
	 * refill count is the capacity (whether {@code refill-tokens} was left out or set equal to it); a concurrency
	 * limit is {@code max-in-flight} slots freed after {@code max-request-duration} (default
	 * {@value #DEFAULT_MAX_REQUEST_DURATION_SECONDS} s); a quota counts in the plan's {@code quota-zone}, else (and
	 * always for a global quota, which every plan shares) in {@code ratelimit.quota.zone}.
	 * @param name the policy name
	 * @param limit the validated configured limit
	 * @param quota the quota calendar's settings
	 * @param planZone the plan's {@code quota-zone}, or {@code null}
	 * @return the limit
	 */
	static LimitDefinition toLimitDefinition(String name, RateLimitProperties.Limit limit,
			RateLimitProperties.Quota quota, @Nullable String planZone) {
		LimitScope scope = (limit.getScope() != null) ? limit.getScope() : LimitScope.CLIENT;
		if (limit.isQuota()) {
			String zoneName = (planZone != null && scope != LimitScope.GLOBAL) ? planZone : quota.getZone();
			ZoneId zone = Objects.requireNonNull(LimitRules.quotaZone(zoneName), "quota zone");
			QuotaPeriod period = LimitRules.quotaPeriod(Objects.requireNonNull(limit.getPeriod(), "period"), zone,
					quota.getFirstDayOfWeek());
			return LimitDefinition.quota(name, limit.getLimit(), period).withScope(scope).withUnit(limit.getUnit());
		}
		if (limit.isConcurrency()) {
			return LimitDefinition.concurrency(name, limit.getMaxInFlight(), maxRequestDuration(limit)).withScope(scope);
		}
		Algorithm algorithm = (limit.getAlgorithm() != null) ? limit.getAlgorithm() : Algorithm.TOKEN_BUCKET;
		long refillTokens = algorithm.isWindow() ? limit.getCapacity() : limit.getRefillTokens();
		return new LimitDefinition(name, limit.getCapacity(), refillTokens, refillPeriod(limit), algorithm, scope,
				Objects.requireNonNullElse(limit.getLease(), LeaseBudget.OFF), limit.getUnit());
	}

	/** Default of a concurrency limit's {@code max-request-duration}, in seconds. */
	public static final long DEFAULT_MAX_REQUEST_DURATION_SECONDS = 30;

	/**
	 * A concurrency limit's {@code max-request-duration}, or its default.
	 * @param limit a configured concurrency limit
	 * @return the longest a request may hold its slot
	 */
	static Duration maxRequestDuration(RateLimitProperties.Limit limit) {
		return (limit.getMaxRequestDuration() != null) ? limit.getMaxRequestDuration()
				: Duration.ofSeconds(DEFAULT_MAX_REQUEST_DURATION_SECONDS);
	}

	/** A rate limit's period, which the validator requires before any limit is built. */
	private static Duration refillPeriod(RateLimitProperties.Limit limit) {
		return Objects.requireNonNull(limit.getRefillPeriod(), "refill-period");
	}

	/**
	 * {@code <plan>-<group>}, or {@code <group>-global} for a global limit (shared across plans, so not named after
	 * one), with {@code -<unit>} appended for a limit counting usage ({@code free-chat-tokens}), and {@code -<period>}
	 * (or {@code -concurrency}) when the list has several limits other than quotas; a quota always ends with its
	 * period ({@code free-search-month}).
	 */
	private static String defaultPolicyName(String plan, String group, RateLimitProperties.Limit limit, int count) {
		String base = (limit.getScope() == LimitScope.GLOBAL) ? group + "-global" : plan + "-" + group;
		if (!limit.isConcurrency() && !LimitDefinition.REQUESTS.equals(limit.getUnit())) {
			base = base + "-" + limit.getUnit();
		}
		if (limit.isQuota()) {
			// a quota's name always says its period: clients read it as "per month", not as a rate
			return base + "-" + LimitRules.quotaPeriod(Objects.requireNonNull(limit.getPeriod(), "period"),
					java.time.ZoneOffset.UTC, java.time.DayOfWeek.MONDAY).label();
		}
		if (count == 1) {
			return base;
		}
		return base + "-" + (limit.isConcurrency() ? "concurrency" : LimitDefinition.periodLabel(refillPeriod(limit)));
	}

	private static List<LimitDefinition> dedupeNames(List<LimitDefinition> limits) {
		Set<String> seen = new HashSet<>();
		List<LimitDefinition> result = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			LimitDefinition limit = limits.get(i);
			String name = limit.policyName();
			if (!seen.add(name)) {
				name = name + "-" + (i + 1);
				seen.add(name);
			}
			result.add(limit.withPolicyName(name));
		}
		return result;
	}

}
