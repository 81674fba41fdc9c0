package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Medians over rounds. */
final class Stats {

	private Stats() {
	}

	/**
	 * The median; of an even count, the mean of the two middle values.
	 * @param values the values (not empty)
	 * @return the median
	 */
	static double median(List<Double> values) {
		if (values.isEmpty()) {
			return Double.NaN;
		}
		List<Double> sorted = new ArrayList<>(values);
		Collections.sort(sorted);
		int n = sorted.size();
		return (n % 2 == 1) ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
	}

	static double min(List<Double> values) {
		return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
	}

	static double max(List<Double> values) {
		return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
	}

}
