package io.github.ratelimit.sample.mvc;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.mvc.RateLimitFilterFunctions;
import io.github.ratelimit.gateway.route.RateLimitArguments;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;

/**
 * The {@code login} route, built with Gateway Server MVC's Java DSL rather than in {@code application.yml}: the
 * {@code RateLimit} filter as a {@code HandlerFilterFunction} with every argument the YAML form takes. Failed login
 * attempts ({@code 401}, {@code 403}) are limited per client address (whatever API key they carry); successful ones
 * are given back what they took. The route fails closed (503) when the limiter is unavailable.
 */
@Configuration(proxyBeanMethods = false)
class LoginRouteConfiguration {

	/**
	 * {@code /auth/login} to the upstream, limited in the {@code login} group by client address, critical, counting
	 * answers {@code 401} and {@code 403} only.
	 * @param upstream the upstream's base URI ({@code UPSTREAM_URI}, or the demo upstream)
	 * @return the route
	 */
	@Bean
	RouterFunction<ServerResponse> loginRoute(@Value("${" + DemoUpstreamInitializer.PROPERTY + "}") String upstream) {
		return route("login").route(RequestPredicates.path("/auth/login"), http())
			.before(uri(upstream))
			.filter(RateLimitFilterFunctions.rateLimit(new RateLimitArguments().setGroup("login")
				.setKeyBy(KeyBy.IP)
				.setCritical(true)
				.setCountWhen("401,403")))
			.build();
	}

}
