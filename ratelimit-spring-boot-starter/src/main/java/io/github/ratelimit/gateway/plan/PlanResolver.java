package io.github.ratelimit.gateway.plan;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Finds the plan of an API key. Replace the default ({@link StaticPlanResolver}, backed by
 * {@code ratelimit.api-keys}) with a bean of this type to look keys up elsewhere.
 */
@FunctionalInterface
public interface PlanResolver {

	/**
	 * Resolve the plan of an API key.
	 * @param apiKey the API key from the request, not blank, with its hash
	 * @return the plan name, or empty when the key is unknown (the client is then limited by IP under the anonymous
	 * plan); completed at once when nothing is waited for; completed exceptionally (or a thrown exception) counts as
	 * an unknown key
	 */
	CompletionStage<Optional<String>> resolvePlan(ApiKey apiKey);

}
