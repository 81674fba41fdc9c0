package io.github.ratelimit.gateway.protection;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;

/**
 * How an adaptive limit is found from latency: algorithms of Netflix's concurrency-limits library
 * ({@code com.netflix.concurrency-limits:concurrency-limits-core}), with its default tuning.
 */
public enum AdaptiveAlgorithm {

	/**
	 * Gradient2: the ratio of a long-term average latency to the latest one; grows the limit while latency holds,
	 * shrinks it as latency rises beyond 1.5 times the long-term average. Keeps no minimum latency, so it never probes.
	 */
	GRADIENT,

	/**
	 * Vegas: the queue the latency above the least latency seen implies; grows the limit while that queue is small,
	 * shrinks it when large or on a drop. Re-reads its least latency from an ordinary sample after a jittered number of
	 * samples (15 to 30 times the limit), without lowering the limit.
	 */
	VEGAS;

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
			case VEGAS -> VegasLimit.newBuilder().maxConcurrency(max).initialLimit(initial).build();
		};
	}

	/**
	 * The algorithm's name in configuration.
	 * @return {@code gradient} or {@code vegas}
	 */
	public String tag() {
		return name().toLowerCase(java.util.Locale.ROOT);
	}

}
