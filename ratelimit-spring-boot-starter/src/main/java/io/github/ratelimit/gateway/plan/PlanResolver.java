package io.github.ratelimit.gateway.plan;

import reactor.core.publisher.Mono;

/**
 * Finds the plan of an API key. Replace the default ({@link StaticPlanResolver}, backed by
 * {@code ratelimit.api-keys}) with a bean of this type to look keys up elsewhere.
 */
@FunctionalInterface
public interface PlanResolver {

	/**
	 * Resolve the plan of an API key.
	 * @param apiKey the raw API key from the request, not blank; a credential, never to be logged
	 * @return the plan name, or an empty {@code Mono} when the key is unknown (the client is then limited by IP
	 * under the anonymous plan); an error is treated like an unknown key
	 */
	Mono<String> resolvePlan(String apiKey);

}
