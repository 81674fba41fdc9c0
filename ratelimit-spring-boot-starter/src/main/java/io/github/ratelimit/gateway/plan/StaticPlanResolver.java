package io.github.ratelimit.gateway.plan;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** {@link PlanResolver} over a fixed map of API key to plan name ({@code ratelimit.api-keys}); answers at once. */
public class StaticPlanResolver implements PlanResolver {

	private final Map<String, CompletionStage<Optional<String>>> plansByApiKey;

	/**
	 * Create a resolver over a fixed map.
	 * @param plansByApiKey API key to plan name; copied
	 */
	public StaticPlanResolver(Map<String, String> plansByApiKey) {
		this.plansByApiKey = Map.copyOf(plansByApiKey.entrySet()
			.stream()
			.collect(java.util.stream.Collectors.toMap(Map.Entry::getKey,
					(entry) -> CompletableFuture.completedStage(Optional.of(entry.getValue())))));
	}

	@Override
	public CompletionStage<Optional<String>> resolvePlan(ApiKey apiKey) {
		return this.plansByApiKey.getOrDefault(apiKey.value(), Plans.UNKNOWN);
	}

	@Override
	public String toString() {
		return "StaticPlanResolver[" + this.plansByApiKey.size() + " keys]";
	}

}
