package io.github.ratelimit.gateway.webflux;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.messages;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad usage arguments of a {@code RateLimit} filter stop start-up naming the argument, never a request at runtime:
 * group {@code search} of plan {@code free} counts {@code tokens} (capacity 1,000) besides requests.
 */
class UsageArgumentsStartUpTest {

	private static final String FILTER_1 = "spring.cloud.gateway.server.webflux.routes[0].filters[1].";

	private static final String TOKENS = "ratelimit.plans.free.groups.search[1].";

	private final ReactiveWebApplicationContextRunner runner = runner(PLANS_AND_ROUTE).withPropertyValues(
			TOKENS + "capacity=1000", TOKENS + "refill-tokens=1000", TOKENS + "refill-period=1m", TOKENS + "unit=tokens",
			"spring.cloud.gateway.server.webflux.routes[0].filters[0]=StripPrefix=0", FILTER_1 + "name=RateLimit",
			FILTER_1 + "args.usage=json:usage.total_tokens");

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', value = { "reserve-max|-1", "reserve-max|0", "reserve-max|abc", "reserve-max|1.5",
			"reserve-max|99999999999999999999", "reserve|-5", "reserve|1.5", "reserve|abc", "reserve|header:",
			"reserve|json:", "reserve|json:a..b", "reserve|header:X Max", "reserve|99999999999999999999",
			"usage|header:", "usage|json:", "usage|json:.", "usage|header:X Usage", "usage|bytes:x",
			"count-when|600", "count-when|99", "count-when|4x", "count-when|6xx", "count-when|401,,403",
			"count-when|' '" })
	void aBadArgumentStopsStartUpNamingIt(String argument, String value) {
		this.runner.withPropertyValues(FILTER_1 + "args." + argument + "=" + value).run((context) -> {
			assertThat(context).as("%s=%s", argument, value).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("args." + argument);
		});
	}

}
