package io.github.ratelimit.gateway.webflux;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pass-through {@code RateLimit} filter of a disabled starter: which routes its WARNs name, and that it passes.
 */
@ExtendWith(OutputCaptureExtension.class)
class DisabledRateLimitGatewayFilterFactoryTest {

	@Test
	void theStartupWarningNamesTheConfiguredRoutesAndALaterRouteGetsOneOfItsOwn(CapturedOutput output) {
		GatewayProperties gateway = new GatewayProperties();
		gateway.setRoutes(List.of(route("search", "RateLimit=search"), route("public", "AddRequestHeader=X-A, b"),
				route("login", "RateLimit")));
		DisabledRateLimitGatewayFilterFactory factory = new DisabledRateLimitGatewayFilterFactory(gateway);
		factory.afterSingletonsInstantiated();
		assertThat(output.getAll()).containsOnlyOnce("Rate limiting is disabled (ratelimit.enabled=false): routes"
				+ " [search, login] name the RateLimit filter and pass unchecked");
		factory.apply(config("search"));
		factory.apply(config("added"));
		factory.apply(config("added")); // built again on a route refresh
		assertThat(output.getAll()).doesNotContain("route search names")
			.containsOnlyOnce("Rate limiting is disabled (ratelimit.enabled=false): route added names the RateLimit"
					+ " filter and passes unchecked");
	}

	@Test
	void defaultFiltersMeanEveryRoute(CapturedOutput output) {
		GatewayProperties gateway = new GatewayProperties();
		gateway.setRoutes(List.of(route("search")));
		gateway.setDefaultFilters(List.of(new FilterDefinition("RateLimit")));
		DisabledRateLimitGatewayFilterFactory factory = new DisabledRateLimitGatewayFilterFactory(gateway);
		factory.afterSingletonsInstantiated();
		factory.apply(config("search"));
		assertThat(output.getAll()).containsOnlyOnce("the default filters name the RateLimit filter, so every route"
				+ " passes unchecked").doesNotContain("route search names");
	}

	@Test
	void withoutRoutesNamingItOneInfoLine(CapturedOutput output) {
		new DisabledRateLimitGatewayFilterFactory(null).afterSingletonsInstantiated();
		assertThat(output.getAll()).contains("INFO").contains("Rate limiting is disabled (ratelimit.enabled=false)")
			.doesNotContain("WARN");
	}

	@Test
	void theFilterPassesEveryRequestOnAndShowsItIsDisabled() {
		RateLimitGatewayFilterFactory.Config config = config("search");
		config.setGroup("search");
		GatewayFilter filter = new DisabledRateLimitGatewayFilterFactory(null).apply(config);
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/search/x"));
		boolean[] passed = { false };
		filter.filter(exchange, (e) -> {
			passed[0] = (e == exchange);
			return Mono.empty();
		}).block();
		assertThat(passed[0]).isTrue();
		assertThat(exchange.getResponse().getStatusCode()).isNull();
		assertThat(filter.toString()).contains("RateLimit").contains("group = 'search'").contains("enabled = false");
	}

	private static RouteDefinition route(String id, String... filters) {
		RouteDefinition route = new RouteDefinition();
		route.setId(id);
		route.setFilters(Arrays.stream(filters).map(FilterDefinition::new).toList());
		return route;
	}

	private static RateLimitGatewayFilterFactory.Config config(String routeId) {
		RateLimitGatewayFilterFactory.Config config = new RateLimitGatewayFilterFactory.Config();
		config.setRouteId(routeId);
		return config;
	}

}
