package io.github.ratelimit.mvc;

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
 * With {@code test.bad-java-route=true}: a Java route whose {@code RateLimit} filter names a group the limits do not
 * define ({@link ServerMvcConfigurationFailureTest}). A top-level class: Spring Boot's test type filter leaves the
 * nested classes of test classes out of component scanning.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("test.bad-java-route")
class BadJavaRouteConfiguration {

	@Bean
	RouterFunction<ServerResponse> badJavaRoute() {
		return route("orders").GET("/orders/**", http()).before(uri("http://127.0.0.1:9"))
			.filter(rateLimit("ordres"))
			.build();
	}

}
