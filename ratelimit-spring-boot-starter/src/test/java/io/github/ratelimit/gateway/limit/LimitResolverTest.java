package io.github.ratelimit.gateway.limit;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.config.RateLimitProperties;
import org.junit.jupiter.api.Test;

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
		assertThat(search.limits()).extracting(BucketLimit::policyName).containsExactly("free-search");
		assertThat(search.limits().get(0).windowSeconds()).isEqualTo(5);

		PlanLimits api = resolver.limitsFor("free", "api");
		assertThat(api.limits()).extracting(BucketLimit::policyName).containsExactly("free-api-1s", "free-api-1d");
		assertThat(api.smallestCapacity()).isEqualTo(20);
		assertThat(resolver.limitsFor("free", "api")).isSameAs(api);
	}

	@Test
	void periodLabels() {
		assertThat(LimitResolver.periodLabel(Duration.ofMinutes(15))).isEqualTo("15m");
		assertThat(LimitResolver.periodLabel(Duration.ofHours(2))).isEqualTo("2h");
		assertThat(LimitResolver.periodLabel(Duration.ofMillis(1500))).isEqualTo("1500ms");
	}

	private static RateLimitProperties.Limit limit(long capacity, long refill, Duration period) {
		RateLimitProperties.Limit limit = new RateLimitProperties.Limit();
		limit.setCapacity(capacity);
		limit.setRefillTokens(refill);
		limit.setRefillPeriod(period);
		return limit;
	}

}
