package io.github.ratelimit.mvc;

import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Bad {@code RateLimit} arguments on Server MVC routes stop start-up with a message that names the route and the
 * argument: configured routes by their property, Java routes ({@link BadJavaRouteConfiguration}) by the filter.
 */
class ServerMvcConfigurationFailureTest {

	private static final String ROUTE = "spring.cloud.gateway.server.webmvc.routes[0].";

	@Test
	void aConfiguredRouteNamingAnUnknownGroupStopsStartUpNamingTheProperty() {
		Throwable failure = start(ROUTE + "id=orders", ROUTE + "uri=http://127.0.0.1:9", ROUTE + "predicates[0]=Path=/o/**",
				ROUTE + "filters[0].name=RateLimit", ROUTE + "filters[0].args.group=ordres",
				ROUTE + "filters[0].args.cost=0");
		assertThat(messageOf(failure))
			.contains(ROUTE + "filters[0].args.group: names endpoint group 'ordres', which no plan")
			.contains(ROUTE + "filters[0].args.cost: must be a whole number of tokens of at least 1, was '0'");
	}

	@Test
	void aJavaRouteNamingAnUnknownGroupStopsStartUpNamingTheFilter() {
		Throwable failure = start("test.bad-java-route=true");
		assertThat(messageOf(failure)).contains("RateLimit[group=ordres")
			.contains("names endpoint group 'ordres', which no plan and no ratelimit.groups entry defines");
	}

	@Test
	void aJavaRouteWithoutAGroupIsCheckedAtStartUpAgainstEveryRuleItsRouteIdDoesNotDecide() {
		Throwable failure = start("test.headerless-java-route=true");
		assertThat(messageOf(failure)).contains("route 'RateLimit[keyBy=HEADER]' RateLimit.args.header: is missing");
	}

	private static Throwable start(String... properties) {
		Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(ServerMvcTestApplication.class)
			.properties("server.port=0", "upstream.uri=http://127.0.0.1:9", "spring.data.redis.port=9",
					"ratelimit.plans.anonymous.default[0].capacity=2",
					"ratelimit.plans.anonymous.default[0].refill-tokens=1",
					"ratelimit.plans.anonymous.default[0].refill-period=1m",
					"ratelimit.plans.anonymous.groups.a[0].capacity=2",
					"ratelimit.plans.anonymous.groups.a[0].refill-tokens=1",
					"ratelimit.plans.anonymous.groups.a[0].refill-period=1m",
					"ratelimit.plans.anonymous.groups.fast[0].capacity=2",
					"ratelimit.plans.anonymous.groups.fast[0].refill-tokens=1",
					"ratelimit.plans.anonymous.groups.fast[0].refill-period=1m")
			.properties(properties)
			.run()
			.close());
		assertThat(failure).isNotNull();
		return failure;
	}

	private static String messageOf(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof RateLimitConfigurationException) {
				return cause.getMessage();
			}
		}
		throw new AssertionError("no RateLimitConfigurationException in " + failure, failure);
	}

}
