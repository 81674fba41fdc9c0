package io.github.ratelimit.gateway.properties;

import java.time.Duration;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import org.junit.jupiter.api.Test;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.ANONYMOUS_AND_FREE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.FREE_WITH_GLOBAL_SEARCH;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitProperties} as bound from configuration (relaxed names) and resolved into limits: each
 * {@code algorithm}, window limits without {@code refill-tokens}, {@code scope: global} with client the default, and
 * group-wide policy names.
 */
class RateLimitPropertiesTest {

	private static final String LIMIT = "ratelimit.plans.free.groups.search[0].";

	@Test
	void eachAlgorithmBindsAndWindowLimitsNeedNoRefillTokens() {
		runner(ANONYMOUS_AND_FREE).withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-period=1m",
				LIMIT + "algorithm=sliding-window-log", "ratelimit.plans.free.groups.search[1].capacity=1000",
				"ratelimit.plans.free.groups.search[1].refill-tokens=1000",
				"ratelimit.plans.free.groups.search[1].refill-period=1h",
				"ratelimit.plans.free.groups.search[1].algorithm=SLIDING_WINDOW_COUNTER",
				"ratelimit.plans.free.groups.search[2].capacity=10000",
				"ratelimit.plans.free.groups.search[2].refill-period=1d",
				"ratelimit.plans.free.groups.search[2].algorithm=fixed-window")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitResolver resolver = context.getBean(LimitResolver.class);
				assertThat(resolver.limitsFor("free", "search").limits()).containsExactly(
						LimitDefinition.window("free-search-1m", Algorithm.SLIDING_WINDOW_LOG, 100, Duration.ofMinutes(1)),
						LimitDefinition.window("free-search-1h", Algorithm.SLIDING_WINDOW_COUNTER, 1000, Duration.ofHours(1)),
						LimitDefinition.window("free-search-1d", Algorithm.FIXED_WINDOW, 10000, Duration.ofDays(1)));
				// the policy's window w is the configured window
				assertThat(resolver.limitsFor("free", "search").limits()).extracting((limit) -> limit.windowSeconds(java.time.Instant.EPOCH))
					.containsExactly(60L, 3600L, 86400L);
				// token bucket stays the default
				assertThat(resolver.limitsFor("free", "other").limits().get(0).algorithm())
					.isEqualTo(Algorithm.TOKEN_BUCKET);
			});
	}

	@Test
	void emptyAlgorithmKeepsTheTokenBucket() {
		runner(ANONYMOUS_AND_FREE).withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-tokens=1",
				LIMIT + "refill-period=1s", LIMIT + "algorithm=")
			.run((context) -> assertThat(context.getBean(LimitResolver.class).limitsFor("free", "search").limits()
				.get(0).algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET));
	}

	@Test
	void globalBindsAndClientIsTheDefault() {
		runner(FREE_WITH_GLOBAL_SEARCH).run((context) -> {
			assertThat(context).hasNotFailed();
			LimitResolver resolver = context.getBean(LimitResolver.class);
			assertThat(resolver.limitsFor("free", "search").limits()).containsExactly(
					new LimitDefinition("free-search-1s", 5, 1, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET,
							LimitScope.CLIENT),
					// a group-wide policy is named after the group, not one plan
					new LimitDefinition("search-global-1s", 1000, 500, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET,
							LimitScope.GLOBAL));
			assertThat(resolver.limitsFor("free", "search").hasGlobalLimits()).isTrue();
			assertThat(resolver.limitsFor("free", "other").hasGlobalLimits()).isFalse();
		});
	}

	@Test
	void plansGivingAGroupTheSameGlobalLimitsOrNoneStart() {
		runner(FREE_WITH_GLOBAL_SEARCH).withPropertyValues("ratelimit.plans.pro.default[0].capacity=200",
				"ratelimit.plans.pro.default[0].refill-tokens=100", "ratelimit.plans.pro.default[0].refill-period=1s",
				"ratelimit.plans.pro.groups.search[0].capacity=1000",
				"ratelimit.plans.pro.groups.search[0].refill-tokens=500",
				"ratelimit.plans.pro.groups.search[0].refill-period=1s",
				"ratelimit.plans.pro.groups.search[0].scope=global")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				// the same group-wide policy for both plans
				assertThat(context.getBean(LimitResolver.class).limitsFor("pro", "search").limits())
					.extracting(LimitDefinition::policyName)
					.containsExactly("search-global");
			});
	}

}
