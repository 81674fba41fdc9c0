package io.github.ratelimit.gateway.plan;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Asks several {@link PlanResolver}s in order, each only when the ones before it do not know the key; the first that
 * knows a key decides. Used to keep the static {@code ratelimit.api-keys} entries (demo and operator keys) in front
 * of a plan store.
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
	public CompletionStage<Optional<String>> resolvePlan(ApiKey apiKey) {
		CompletionStage<Optional<String>> plan = Plans.UNKNOWN;
		for (PlanResolver resolver : this.resolvers) {
			plan = plan.thenCompose((found) -> found.isPresent() ? plan(found) : resolver.resolvePlan(apiKey));
		}
		return plan;
	}

	private static CompletionStage<Optional<String>> plan(Optional<String> found) {
		return Plans.of(found.get());
	}

	@Override
	public String toString() {
		return "ChainedPlanResolver" + this.resolvers;
	}

}
