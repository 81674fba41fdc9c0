package io.github.ratelimit.gateway.webflux;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * A gateway with the key resolvers of the migration guide's "before" configuration (Gateway's own
 * {@code RequestRateLimiter}), beside the starter: {@link GatewayRequestRateLimiterRoutesIntegrationTest} checks that
 * the bean methods are the guide's code.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class MigrationGuideBeforeTestApplication {

	@Bean
	@Primary
	KeyResolver apiKeyResolver() {
		return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-API-Key"));
	}

	@Bean
	KeyResolver ipKeyResolver() {
		return (exchange) -> Mono.just(exchange.getRequest().getRemoteAddress().getAddress().getHostAddress());
	}

}
