package io.github.ratelimit.gateway.protection;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;

/**
 * How an adaptive limit is found from latency: algorithms of Netflix's concurrency-limits library
 * ({@code com.netflix.concurrency-limits:concurrency-limits-core}).
 */
public enum AdaptiveAlgorithm {

	/**
	 * Vegas (the default): the queue that the latency above the least latency seen implies,
	 * {@code limit * (1 - least / latest)}; grows the limit while that queue is below {@code 3 * log10(limit)}, shrinks
	 * it above {@code 6 * log10(limit)} and on a drop, each step smoothed by {@value #VEGAS_SMOOTHING} (the library's
	 * default is 1, no smoothing). Re-reads its least latency from an ordinary sample after a jittered 15 to 30 times
	 * the limit in samples, without lowering the limit.
	 */
	VEGAS,

	/**
	 * Gradient2: the ratio of a long-term average latency (600 samples) to the latest one; grows the limit while
	 * latency holds, shrinks it as latency rises beyond 1.5 times the long-term average; the library's default tuning.
	 * Keeps no least latency, so it never probes. Drops count only through their latency.
	 */
	GRADIENT;

	/** The smoothing of Vegas' steps: each new limit is {@code 0.8 * old + 0.2 * computed}. */
	static final double VEGAS_SMOOTHING = 0.2;

	/**
	 * The library's limit for this algorithm.
	 * @param min the least limit, at least 1
	 * @param max the largest limit, at least {@code min}
	 * @param initial the limit before any sample, from {@code min} to {@code max}
	 * @return a new limit
	 */
	Limit newLimit(int min, int max, int initial) {
		return switch (this) {
			case GRADIENT -> Gradient2Limit.newBuilder()
				.minLimit(min)
				.maxConcurrency(max)
				.initialLimit(initial)
				.build();
			case VEGAS -> VegasLimit.newBuilder()
				.maxConcurrency(max)
				.initialLimit(initial)
				.smoothing(VEGAS_SMOOTHING)
				.build();
		};
	}

	/**
	 * The algorithm's name in configuration.
	 * @return {@code vegas} or {@code gradient}
	 */
	public String tag() {
		return name().toLowerCase(java.util.Locale.ROOT);
	}

}
