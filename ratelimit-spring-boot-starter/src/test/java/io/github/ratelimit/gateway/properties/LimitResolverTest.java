package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.protection.Priority;
import org.junit.jupiter.api.Test;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.limit;
import static org.assertj.core.api.Assertions.assertThat;

class LimitResolverTest {

	@Test
	void groupListReplacesDefaultAndPolicyNamesFollowPlanGroupAndPeriod() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan free = new RateLimitProperties.Plan();
		free.setDefault(List.of(limit(20, 10, Duration.ofSeconds(1)), limit(10_000, 10_000, Duration.ofDays(1))));
		free.getGroups().put("search", List.of(limit(5, 1, Duration.ofSeconds(1))));
		properties.getPlans().put("free", free);
		LimitResolver resolver = new LimitResolver(properties);

		PlanLimits search = resolver.limitsFor("free", "search");
		assertThat(search.limits()).extracting(LimitDefinition::policyName).containsExactly("free-search");
		assertThat(search.limits().get(0).windowSeconds(java.time.Instant.EPOCH)).isEqualTo(5);

		PlanLimits api = resolver.limitsFor("free", "api");
		assertThat(api.limits()).extracting(LimitDefinition::policyName).containsExactly("free-api-1s", "free-api-1d");
		assertThat(api.smallestCapacity()).isEqualTo(20);
		assertThat(resolver.limitsFor("free", "api")).isSameAs(api);
	}

	@Test
	void aQuotaCountsInItsPlansZoneAndItsNameSaysItsPeriodAGlobalQuotaInTheGlobalZone() {
		RateLimitProperties properties = new RateLimitProperties();
		properties.getQuota().setZone("+03:28");
		properties.getQuota().setFirstDayOfWeek(java.time.DayOfWeek.SUNDAY);
		RateLimitProperties.Plan free = new RateLimitProperties.Plan();
		free.setQuotaZone("Europe/Berlin");
		RateLimitProperties.Limit month = new RateLimitProperties.Limit();
		month.setType(RateLimitProperties.Limit.Type.QUOTA);
		month.setLimit(100_000);
		month.setPeriod("month");
		RateLimitProperties.Limit week = new RateLimitProperties.Limit();
		week.setType(RateLimitProperties.Limit.Type.QUOTA);
		week.setLimit(5_000_000);
		week.setPeriod("WEEK");
		week.setScope(io.github.ratelimit.gateway.limits.LimitScope.GLOBAL);
		RateLimitProperties.Limit fixed = new RateLimitProperties.Limit();
		fixed.setType(RateLimitProperties.Limit.Type.QUOTA);
		fixed.setLimit(7);
		fixed.setPeriod("90s");
		free.setDefault(List.of(limit(5, 1, Duration.ofSeconds(1)), month, week, fixed));
		properties.getPlans().put("free", free);

		List<LimitDefinition> limits = new LimitResolver(properties).limitsFor("free", "search").limits();
		assertThat(limits).extracting(LimitDefinition::policyName)
			.containsExactly("free-search", "free-search-month", "search-global-week", "free-search-90s");
		assertThat(limits.get(1).quotaPeriod()).isEqualTo(io.github.ratelimit.gateway.limits.QuotaPeriod
			.of(io.github.ratelimit.gateway.limits.QuotaPeriodUnit.MONTH, java.time.ZoneId.of("Europe/Berlin")));
		assertThat(limits.get(1).algorithm()).isEqualTo(io.github.ratelimit.gateway.limits.Algorithm.QUOTA);
		assertThat(limits.get(1).capacity()).isEqualTo(100_000);
		assertThat(limits.get(2).quotaPeriod()).isEqualTo(io.github.ratelimit.gateway.limits.QuotaPeriod.of(
				io.github.ratelimit.gateway.limits.QuotaPeriodUnit.WEEK, java.time.ZoneOffset.of("+03:28"),
				java.time.DayOfWeek.SUNDAY));
		assertThat(limits.get(3).quotaPeriod())
			.isEqualTo(io.github.ratelimit.gateway.limits.QuotaPeriod.fixed(Duration.ofSeconds(90)));
		// w is the length of the period containing the instant: 29 days of February 2028 in Berlin
		assertThat(limits.get(1).windowSeconds(java.time.Instant.parse("2028-02-10T00:00:00Z"))).isEqualTo(29 * 86_400);
		// March 2028 in Berlin loses an hour to daylight saving
		assertThat(limits.get(1).windowSeconds(java.time.Instant.parse("2028-03-10T00:00:00Z")))
			.isEqualTo(31 * 86_400 - 3_600);
	}

	@Test
	void principalAndHeaderPlansAreTheAnonymousPlanUnlessSetAndFollowAValidReload() {
		RateLimitProperties properties = new RateLimitProperties();
		for (String name : List.of("anonymous", "free", "partner")) {
			RateLimitProperties.Plan plan = new RateLimitProperties.Plan();
			plan.setDefault(List.of(limit(5, 1, Duration.ofMinutes(1))));
			properties.getPlans().put(name, plan);
		}
		LimitResolver resolver = new LimitResolver(properties);
		assertThat(resolver.principalPlan()).isEqualTo("anonymous");
		assertThat(resolver.headerPlan()).isEqualTo("anonymous");
		properties.getPrincipal().setDefaultPlan("free");
		properties.setHeaderPlan("partner");
		assertThat(resolver.principalPlan()).as("not before a reload").isEqualTo("anonymous");
		assertThat(resolver.reload()).isEmpty();
		assertThat(resolver.principalPlan()).isEqualTo("free");
		assertThat(resolver.headerPlan()).isEqualTo("partner");
		// a reload that drops the principals' plan is refused: the plans in force stay
		properties.getPlans().remove("free");
		assertThat(resolver.reload()).extracting(ConfigurationViolation::property)
			.containsExactly("ratelimit.principal.default-plan");
		assertThat(resolver.principalPlan()).isEqualTo("free");
		assertThat(resolver.isKnown("free")).isTrue();
	}

	@Test
	void liveChangesApplyOnlyAfterAValidReload() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(limit(5, 1, Duration.ofMinutes(1))));
		properties.getPlans().put("anonymous", anonymous);
		LimitResolver resolver = new LimitResolver(properties);
		PlanLimits before = resolver.limitsFor("anonymous", "api");
		// a rebinding empties and refills the live object in place: lookups do not see it half-way
		properties.getPlans().clear();
		assertThat(resolver.limitsFor("anonymous", "api")).isSameAs(before);
		assertThat(resolver.isKnownPlan("anonymous")).isTrue();
		// invalid new values: reported, the previous limits stay in force
		anonymous.setDefault(List.of(limit(0, 1, Duration.ofMinutes(1))));
		properties.getPlans().put("anonymous", anonymous);
		assertThat(resolver.reload()).extracting(ConfigurationViolation::property)
			.containsExactly("ratelimit.plans.anonymous.default[0].capacity");
		assertThat(resolver.limitsFor("anonymous", "api")).isSameAs(before);
		// valid new values: the next lookup has them; equal configurations give equal limits
		anonymous.setDefault(List.of(limit(2, 2, Duration.ofSeconds(1))));
		assertThat(resolver.reload()).isEmpty();
		assertThat(resolver.limitsFor("anonymous", "api").limits().get(0).capacity()).isEqualTo(2);
		anonymous.setDefault(List.of(limit(5, 1, Duration.ofMinutes(1))));
		assertThat(resolver.reload()).isEmpty();
		assertThat(resolver.limitsFor("anonymous", "api")).isEqualTo(before).isNotSameAs(before);
	}

	@Test
	void theProtectionsTheSharesAndThePlansPrioritiesAreInForceAndFollowAValidReload() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan gold = new RateLimitProperties.Plan();
		gold.setDefault(List.of(limit(5, 1, Duration.ofMinutes(1))));
		gold.setPriority(Priority.HIGH);
		properties.getPlans().put("gold", gold);
		properties.setAnonymousPlan("gold");
		RateLimitProperties.Protection orders = new RateLimitProperties.Protection();
		orders.setLimit(RateLimitProperties.ProtectionLimit.FIXED);
		orders.setMaxInFlight(64);
		orders.setRetryAfter(Duration.ofSeconds(3));
		orders.setShadow(true);
		properties.getProtections().put("orders-backend", orders);
		properties.getPriorities().put("high", "60%");
		LimitResolver resolver = new LimitResolver(properties);

		RateLimitProperties effective = resolver.effectiveProperties();
		assertThat(effective.getPlans().get("gold").getPriority()).isEqualTo(Priority.HIGH);
		assertThat(effective.getPriorities()).containsExactly(Map.entry("high", "60%"));
		RateLimitProperties.Protection inForce = effective.getProtections().get("orders-backend");
		assertThat(inForce).isNotSameAs(orders);
		assertThat(inForce.getLimit()).isEqualTo(RateLimitProperties.ProtectionLimit.FIXED);
		assertThat(inForce.getMaxInFlight()).isEqualTo(64);
		assertThat(inForce.getRetryAfter()).isEqualTo(Duration.ofSeconds(3));
		assertThat(inForce.isShadow()).isTrue();

		gold.setPriority(Priority.LOW);
		assertThat(resolver.effectiveProperties().getPlans().get("gold").getPriority()).isEqualTo(Priority.HIGH);
		assertThat(resolver.reload()).isEmpty();
		assertThat(resolver.effectiveProperties().getPlans().get("gold").getPriority()).isEqualTo(Priority.LOW);
	}

	@Test
	void aLeaseBudgetReachesTheLimitsInForce() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan pro = new RateLimitProperties.Plan();
		RateLimitProperties.Limit leased = limit(2_000, 1_000, Duration.ofSeconds(1));
		leased.setLease(LeaseBudget.of("2%"));
		pro.setDefault(List.of(leased));
		pro.getGroups().put("exact", List.of(limit(2_000, 1_000, Duration.ofSeconds(1))));
		properties.getPlans().put("pro", pro);
		properties.getPlans().put("anonymous", pro);
		LimitResolver resolver = new LimitResolver(properties);
		PlanLimits limits = resolver.limitsFor("pro", "search");
		assertThat(limits.limits().get(0).leaseBudget()).isEqualTo(new LeaseBudget(2));
		assertThat(limits.leaseTokens()).isEqualTo(40);
		assertThat(resolver.limitsFor("pro", "exact").limits().get(0).leaseBudget()).isEqualTo(LeaseBudget.OFF);
		assertThat(resolver.limitsFor("pro", "exact").leaseTokens()).isZero();
	}

	@Test
	void periodLabels() {
		assertThat(LimitDefinition.periodLabel(Duration.ofMinutes(15))).isEqualTo("15m");
		assertThat(LimitDefinition.periodLabel(Duration.ofHours(2))).isEqualTo("2h");
		assertThat(LimitDefinition.periodLabel(Duration.ofMillis(1500))).isEqualTo("1500ms");
	}

}
