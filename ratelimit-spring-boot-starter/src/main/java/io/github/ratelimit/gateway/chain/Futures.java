package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/** What the chain's layers do alike with the futures of the layer below them. */
final class Futures {

	private Futures() {
	}

	/**
	 * Call a layer, turning an exception it throws instead of answering into a failed future.
	 * @param call the call
	 * @param <T> the answer's type
	 * @return the call's future, or a future failed with what it threw
	 */
	static <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * The failure itself, without the {@link CompletionException}s that dependent futures wrap it in.
	 * @param error a future's failure
	 * @return the innermost cause that is not a {@code CompletionException}
	 */
	static Throwable unwrap(Throwable error) {
		Throwable cause = error;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

}
