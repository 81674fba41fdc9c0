package io.github.ratelimit.mvc;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.route.RateLimitArguments;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static io.github.ratelimit.gateway.mvc.RateLimitFilterFunctions.rateLimit;
import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;

/**
 * Java routes whose {@code RateLimit} filters do not fit the limits ({@link ServerMvcConfigurationFailureTest}), each
 * only with its property. A top-level class: Spring Boot's test type filter leaves the
 * nested classes of test classes out of component scanning.
 */
@Configuration(proxyBeanMethods = false)
class BadJavaRouteConfiguration {

	/** With {@code test.bad-java-route=true}: a route naming an unknown group. */
	@Bean
	@ConditionalOnBooleanProperty("test.bad-java-route")
	RouterFunction<ServerResponse> badJavaRoute() {
		return route("orders").GET("/orders/**", http()).before(uri("http://127.0.0.1:9"))
			.filter(rateLimit("ordres"))
			.build();
	}

	/** With {@code test.headerless-java-route=true}: a route keyed by a header it does not name, without a group. */
	@Bean
	@ConditionalOnBooleanProperty("test.headerless-java-route")
	RouterFunction<ServerResponse> headerlessJavaRoute() {
		return route("tenants").GET("/tenants/**", http()).before(uri("http://127.0.0.1:9"))
			.filter(rateLimit(new RateLimitArguments().setKeyBy(KeyBy.HEADER)))
			.build();
	}

}
