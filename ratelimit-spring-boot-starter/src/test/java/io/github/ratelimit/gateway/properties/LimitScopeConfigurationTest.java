package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.limits.LimitScope;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code scope} of a limit: bound from {@code scope: global}, client by default, a group-wide policy name, and
 * plans that disagree on a group's global limits (one shared bucket) stopping start-up naming the property.
 */
class LimitScopeConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withUserConfiguration(GatewayRoutes.class)
		.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
				"ratelimit.plans.anonymous.default[0].refill-tokens=60",
				"ratelimit.plans.anonymous.default[0].refill-period=1m",
				"ratelimit.plans.free.groups.search[0].capacity=5",
				"ratelimit.plans.free.groups.search[0].refill-tokens=1",
				"ratelimit.plans.free.groups.search[0].refill-period=1s",
				"ratelimit.plans.free.groups.search[1].capacity=1000",
				"ratelimit.plans.free.groups.search[1].refill-tokens=500",
				"ratelimit.plans.free.groups.search[1].refill-period=1s",
				"ratelimit.plans.free.groups.search[1].scope=global", "ratelimit.plans.free.default[0].capacity=20",
				"ratelimit.plans.free.default[0].refill-tokens=10", "ratelimit.plans.free.default[0].refill-period=1s");

	@Test
	void globalBindsAndClientIsTheDefault() {
		this.runner.run((context) -> {
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
	void plansGivingAGroupDifferentGlobalLimitsStopStartUp() {
		this.runner.withPropertyValues("ratelimit.plans.pro.default[0].capacity=200",
				"ratelimit.plans.pro.default[0].refill-tokens=100", "ratelimit.plans.pro.default[0].refill-period=1s",
				"ratelimit.plans.pro.groups.search[0].capacity=2000",
				"ratelimit.plans.pro.groups.search[0].refill-tokens=500",
				"ratelimit.plans.pro.groups.search[0].refill-period=1s",
				"ratelimit.plans.pro.groups.search[0].scope=GLOBAL")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.plans.pro.groups.search")
				.contains("plan 'free'")
				.contains("one bucket shared by every client of the group"));
	}

	@Test
	void plansGivingAGroupTheSameGlobalLimitsOrNoneStart() {
		this.runner.withPropertyValues("ratelimit.plans.pro.default[0].capacity=200",
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

	@Test
	void unknownScopeStopsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.plans.free.groups.search[1].scope=everyone").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("ratelimit.plans.free.groups.search[1].scope")
				.contains("everyone");
		});
	}

	@Test
	void plansWithoutTheGroupsGlobalLimitAreNamedInAStartUpWarning() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Limit global = limit(100, io.github.ratelimit.gateway.limits.LimitScope.GLOBAL);
		RateLimitProperties.Limit own = limit(5, io.github.ratelimit.gateway.limits.LimitScope.CLIENT);
		for (String name : List.of("free", "pro")) {
			RateLimitProperties.Plan plan = new RateLimitProperties.Plan();
			plan.setDefault(List.of(own));
			plan.getGroups().put("search", List.of(own, global));
			properties.getPlans().put(name, plan);
		}
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(own));
		properties.getPlans().put("anonymous", anonymous);
		assertThat(RateLimitConfigurationValidator.validateProperties(properties)).isEmpty();
		assertThat(RateLimitConfigurationValidator.globalLimitGaps(properties)).singleElement()
			.satisfies((message) -> assertThat(message).contains("Endpoint group 'search'")
				.contains("ratelimit.plans.anonymous.default")
				.contains("ratelimit.plans.free.groups.search"));
		anonymous.getGroups().put("search", List.of(own, global));
		assertThat(RateLimitConfigurationValidator.globalLimitGaps(properties)).isEmpty();
	}

	private static RateLimitProperties.Limit limit(long capacity, io.github.ratelimit.gateway.limits.LimitScope scope) {
		RateLimitProperties.Limit limit = new RateLimitProperties.Limit();
		limit.setCapacity(capacity);
		limit.setRefillTokens(capacity);
		limit.setRefillPeriod(Duration.ofSeconds(1));
		limit.setScope(scope);
		return limit;
	}

	@Test
	void scopeSetToNullProgrammaticallyIsReported() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan plan = new RateLimitProperties.Plan();
		RateLimitProperties.Limit limit = new RateLimitProperties.Limit();
		limit.setCapacity(5);
		limit.setRefillTokens(5);
		limit.setRefillPeriod(Duration.ofSeconds(1));
		limit.setScope(null);
		plan.setDefault(List.of(limit));
		properties.getPlans().put("anonymous", plan);
		assertThat(RateLimitConfigurationValidator.validateProperties(properties))
			.extracting(ConfigurationViolation::toString)
			.anySatisfy((v) -> assertThat(v).contains("ratelimit.plans.anonymous.default[0].scope"));
	}

	private static String messages(Throwable failure) {
		StringBuilder text = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			text.append(t.getMessage()).append('\n');
		}
		return text.toString();
	}

	private static String failure(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		Throwable cause = context.getStartupFailure();
		while (cause != null && !(cause instanceof RateLimitConfigurationException)) {
			cause = cause.getCause();
		}
		assertThat(cause).as("a RateLimitConfigurationException in %s", context.getStartupFailure()).isNotNull();
		return cause.getMessage();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(GatewayProperties.class)
	static class GatewayRoutes {

	}

}
