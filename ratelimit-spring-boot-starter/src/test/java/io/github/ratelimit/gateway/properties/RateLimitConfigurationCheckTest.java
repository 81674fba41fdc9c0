package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.limit;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * {@link RateLimitConfigurationCheck}: the start-up check runs the property rules, then the route rules, whichever
 * beans the application replaces.
 */
class RateLimitConfigurationCheckTest {

	private final ReactiveWebApplicationContextRunner runner = runner(PLANS_AND_ROUTE);

	@Test
	void validConfigurationStarts() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(LimitResolver.class);
			assertThat(context.getBean(LimitResolver.class).limitsFor("free", "search").limits()).hasSize(1);
		});
	}

	@Test
	void replacingTheLimitResolverDoesNotSkipTheChecks() {
		this.runner.withBean(LimitResolver.class, () -> new LimitResolver(new RateLimitProperties()))
			.withPropertyValues("ratelimit.plans.free.default[0].capacity=0")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.plans.free.default[0].capacity"));
	}

	@Test
	void routesAreCheckedOnlyAgainstValidPropertiesAndTheirProblemsStopStartUp() {
		ConfigurationViolation route = new ConfigurationViolation("route 'r' RateLimit.cost", "is wrong.", "fix it.");
		List<RateLimitProperties> checked = new ArrayList<>();
		RouteArgumentsValidator routes = (properties) -> {
			checked.add(properties);
			return List.of(route);
		};
		// invalid properties (no plan): the routes are not checked against them
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> new RateLimitConfigurationCheck(new RateLimitProperties(), routes).afterPropertiesSet())
			.satisfies((ex) -> assertThat(ex.getViolations()).extracting(ConfigurationViolation::property)
				.contains("ratelimit.plans")
				.doesNotContain(route.property()));
		assertThat(checked).isEmpty();
		RateLimitProperties valid = new RateLimitProperties();
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(limit(5, 5, Duration.ofSeconds(1))));
		valid.getPlans().put("anonymous", anonymous);
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> new RateLimitConfigurationCheck(valid, routes).afterPropertiesSet())
			.satisfies((ex) -> assertThat(ex.getViolations()).containsExactly(route));
		assertThat(checked).containsExactly(valid);
		assertThatNoException()
			.isThrownBy(() -> new RateLimitConfigurationCheck(valid, (properties) -> List.of()).afterPropertiesSet());
	}

}
