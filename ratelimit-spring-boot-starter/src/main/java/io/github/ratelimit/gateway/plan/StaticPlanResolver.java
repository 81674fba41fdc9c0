package io.github.ratelimit.gateway.plan;

import java.util.Map;

import reactor.core.publisher.Mono;

/** {@link PlanResolver} over a fixed map of API key to plan name ({@code ratelimit.api-keys}). */
public class StaticPlanResolver implements PlanResolver {

	private final Map<String, String> plansByApiKey;

	/**
	 * Create a resolver over a fixed map.
	 * @param plansByApiKey API key to plan name; copied
	 */
	public StaticPlanResolver(Map<String, String> plansByApiKey) {
		this.plansByApiKey = Map.copyOf(plansByApiKey);
	}

	@Override
	public Mono<String> resolvePlan(String apiKey) {
		return Mono.justOrEmpty(this.plansByApiKey.get(apiKey));
	}

	@Override
	public String toString() {
		return "StaticPlanResolver[" + this.plansByApiKey.size() + " keys]";
	}

}
