package io.github.ratelimit.gateway.plan;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * Asks several {@link PlanResolver}s in order; the first that knows a key decides. Used to keep the static
 * {@code ratelimit.api-keys} entries (demo and operator keys) in front of a plan store.
 */
public class ChainedPlanResolver implements PlanResolver {

	private final List<PlanResolver> resolvers;

	/**
	 * Create a chain.
	 * @param resolvers the resolvers, asked in this order
	 */
	public ChainedPlanResolver(List<PlanResolver> resolvers) {
		this.resolvers = List.copyOf(resolvers);
	}

	@Override
	public Mono<String> resolvePlan(String apiKey) {
		Mono<String> plan = Mono.empty();
		for (PlanResolver resolver : this.resolvers) {
			plan = plan.switchIfEmpty(Mono.defer(() -> resolver.resolvePlan(apiKey)));
		}
		return plan;
	}

	@Override
	public String toString() {
		return "ChainedPlanResolver" + this.resolvers;
	}

}
