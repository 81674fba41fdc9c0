package io.github.ratelimit.gateway.webflux;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.plan.PlanResolver;

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
		return (apiKey) -> CompletableFuture.completedFuture(
				(apiKey.value().startsWith("load-") || apiKey.value().equals("key-one") || apiKey.value().equals("key-two"))
						? Optional.of("free") : Optional.empty());
	}

}
