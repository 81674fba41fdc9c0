package io.github.ratelimit.benchmarks;

/**
 * One rate limiter under test: checks (and consumes one token of) the bucket of client {@code key}, answering
 * asynchronously through a {@link Sink}.
 */
interface Contender extends AutoCloseable {

	/**
	 * Short name used in the report.
	 * @return the name
	 */
	String name();

	/**
	 * Start one check; the answer goes to {@code sink}, possibly on another thread, possibly before this returns.
	 * @param key index of the client (0 to keys - 1)
	 * @param sink where the answer goes
	 */
	void check(int key, Sink sink);

	/**
	 * Called before each measured run. The starter resets its circuit breaker here if an earlier run (e.g. a stall of
	 * the shared machine) left it open, so that one disturbance does not decide every later run; each reset is
	 * counted and reported.
	 */
	default void prepare() {
	}

	@Override
	default void close() {
	}

	/** Receives the answer of one check. */
	interface Sink {

		/**
		 * The limiter decided.
		 * @param allowed whether the request was allowed
		 * @param source where the decision came from (e.g. {@code SHARED}, {@code CACHED}, {@code LOCAL_FALLBACK})
		 */
		void done(boolean allowed, String source);

		/**
		 * The check failed.
		 * @param error the failure
		 */
		void failed(Throwable error);

	}

}
