package io.github.ratelimit.gateway.plan;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

/** Answers of plan look-ups that are known at once. */
final class Plans {

	/** No plan, completed: a stage that cannot be completed again, so it is shared. */
	static final CompletionStage<Optional<String>> UNKNOWN = CompletableFuture.completedStage(Optional.empty());

	private Plans() {
	}

	/**
	 * A plan known at once.
	 * @param plan the plan name, or {@code null} for none
	 * @return the completed answer
	 */
	static CompletionStage<Optional<String>> of(@Nullable String plan) {
		return (plan != null) ? CompletableFuture.completedStage(Optional.of(plan)) : UNKNOWN;
	}

}
