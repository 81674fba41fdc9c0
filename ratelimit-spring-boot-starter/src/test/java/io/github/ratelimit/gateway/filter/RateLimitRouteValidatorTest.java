package io.github.ratelimit.gateway.filter;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.limit;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitRouteValidator}: bad {@code RateLimit} arguments of configured routes stop start-up naming the
 * route's filter property and the fix; a filter built from bound arguments is checked against the limits in force.
 */
class RateLimitRouteValidatorTest {

	private static final String FILTER_1 = "spring.cloud.gateway.server.webflux.routes[0].filters[1].";

	private final ApplicationContextRunner runner = runner(PLANS_AND_ROUTE);

	@Test
	void costAboveCapacityIsRefusedNamingTheRouteFilter() {
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.group=search", FILTER_1 + "args.cost=6")
			.run((context) -> assertThat(failure(context))
				.contains("spring.cloud.gateway.server.webflux.routes[0].filters[1].args.cost: is 6 tokens, more than the capacity 5"));
	}

	@Test
	void costAboveCapacityIsRefusedWhenTheRouteIdIsTheGroup() {
		// route id 'search' is the group when the filter names none: its capacity 5 applies
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.cost=6")
			.run((context) -> assertThat(failure(context))
				.contains("routes[0].filters[1].args.cost: is 6 tokens, more than the capacity 5 of a limit of plan 'free'"));
	}

	@Test
	void unknownGroupNamedByRouteIsRefused() {
		this.runner.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[0]=RateLimit=serch")
			.run((context) -> assertThat(failure(context))
				.contains("spring.cloud.gateway.server.webflux.routes[0].filters[0].args.group: names endpoint group 'serch'")
				.contains("known: [search]"));
	}

	@Test
	void badKeyByIsRefused() {
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.key-by=cookie")
			.run((context) -> assertThat(failure(context)).contains("args.key-by: must be api-key or ip, was 'cookie'."));
	}

	@Test
	void withoutRouteDefinitionsThereIsNothingToCheck() {
		assertThat(new RateLimitRouteValidator(null).validateRoutes(new RateLimitProperties())).isEmpty();
	}

	@Test
	void aFilterBuiltFromBoundArgumentsIsCheckedAgainstTheLimitsInForce() {
		RateLimitProperties limits = new RateLimitProperties();
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(limit(5, 5, Duration.ofSeconds(1))));
		limits.getPlans().put("anonymous", anonymous);
		assertThat(RateLimitRouteValidator.validateFilter(limits, "r", null, KeyBy.IP, 5)).isEmpty();
		assertThat(RateLimitRouteValidator.validateFilter(limits, "r", null, KeyBy.IP, 6))
			.extracting(ConfigurationViolation::toString)
			.singleElement()
			.asString()
			.startsWith("route 'r' RateLimit.args.cost: is 6 tokens, more than the capacity 5 of a limit of plan "
					+ "'anonymous'");
		assertThat(RateLimitRouteValidator.validateFilter(limits, "r", null, KeyBy.IP, 0))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.cost");
		assertThat(RateLimitRouteValidator.validateFilter(limits, "r", "serch", KeyBy.API_KEY, 1))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.args.group");
		assertThat(RateLimitRouteValidator.validateFilter(limits, null, " ", KeyBy.API_KEY, 1))
			.extracting(ConfigurationViolation::property)
			.containsExactly("RateLimit.group");
	}

}
