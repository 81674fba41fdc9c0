package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.plan.PlanResolver;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * A gateway for the starter's route tests. Its {@link PlanResolver} replaces the starter's static one (proving the
 * bean is replaceable): {@code key-one}/{@code key-two} are free, and so is any key starting with {@code load-}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GatewayTestApplication {

	@Bean
	PlanResolver testPlanResolver() {
		return (apiKey) -> (apiKey.startsWith("load-") || apiKey.equals("key-one") || apiKey.equals("key-two"))
				? Mono.just("free") : Mono.empty();
	}

}
