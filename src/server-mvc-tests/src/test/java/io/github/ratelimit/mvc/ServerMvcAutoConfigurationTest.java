package io.github.ratelimit.mvc;

import io.github.ratelimit.gateway.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.gateway.autoconfigure.RateLimitServerMvcAutoConfiguration;
import io.github.ratelimit.gateway.autoconfigure.RateLimitWebFluxAutoConfiguration;
import io.github.ratelimit.gateway.mvc.CanonicalPathServletFilter;
import io.github.ratelimit.gateway.mvc.RateLimitServletResponseWriter;
import io.github.ratelimit.gateway.mvc.RateLimitFilterFunctionsCheck;
import io.github.ratelimit.gateway.mvc.ServerMvcFrontEnd;
import io.github.ratelimit.gateway.mvc.ServerMvcRouteValidator;
import io.github.ratelimit.gateway.mvc.SlotReleaseServletFilter;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each front end only with its own server: a servlet application gets the Server MVC front end and none of the
 * WebFlux one, a reactive application none of the Server MVC one although its classes are on the class path (the
 * WebFlux front end's are not, here: Gateway refuses to start with both servers present). The core is the same.
 */
class ServerMvcAutoConfigurationTest {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(DataRedisAutoConfiguration.class,
			DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class,
			RateLimitWebFluxAutoConfiguration.class, RateLimitServerMvcAutoConfiguration.class);

	private static final String[] PLANS = { "ratelimit.plans.anonymous.default[0].capacity=60",
			"ratelimit.plans.anonymous.default[0].refill-tokens=60",
			"ratelimit.plans.anonymous.default[0].refill-period=1m" };

	@Test
	void aServletApplicationGetsTheServerMvcFrontEndOnly() {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS).withPropertyValues(PLANS).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitHandler.class)
				.hasSingleBean(RateLimitRoutes.class)
				.hasSingleBean(ServerMvcFrontEnd.class)
				.hasSingleBean(RateLimitFilterFunctionsCheck.class)
				.hasSingleBean(ServerMvcRouteValidator.class)
				.hasSingleBean(RateLimitServletResponseWriter.class)
				.hasSingleBean(CanonicalPathServletFilter.class)
				.hasSingleBean(SlotReleaseServletFilter.class)
				.doesNotHaveBean("rateLimitGatewayFilterFactory")
				.doesNotHaveBean("rateLimitResponseWriter")
				.doesNotHaveBean("rateLimitCanonicalPathWebFilter")
				.doesNotHaveBean("rateLimitSlotReleaseWebFilter")
				.doesNotHaveBean("rateLimitRouteValidator");
			assertThat(context.getBean(RateLimitFilterFunctionsCheck.class).toString()).doesNotContain("disabled");
		});
	}

	@Test
	void aReactiveApplicationGetsNoServerMvcBeans() {
		new ReactiveWebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues(PLANS)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitHandler.class)
				.doesNotHaveBean(ServerMvcFrontEnd.class)
				.doesNotHaveBean(RateLimitFilterFunctionsCheck.class)
				.doesNotHaveBean(ServerMvcRouteValidator.class)
				.doesNotHaveBean(RateLimitServletResponseWriter.class)
				.doesNotHaveBean(CanonicalPathServletFilter.class)
				.doesNotHaveBean(SlotReleaseServletFilter.class));
	}

	@Test
	void switchedOffEveryFilterPassesAndNoLimiterIsMade() {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(RateLimitFilterFunctionsCheck.class)
					.doesNotHaveBean(ServerMvcFrontEnd.class)
					.doesNotHaveBean(RateLimitHandler.class)
					.doesNotHaveBean(CanonicalPathServletFilter.class);
				assertThat(context.getBean(RateLimitFilterFunctionsCheck.class).toString()).contains("disabled");
			});
	}

}
