package io.github.ratelimit.accuracy;

import java.util.Locale;

/**
 * The token bucket's upper bound, checked on a run's admitted times: over any interval, never more admitted than
 * {@code capacity + rate × its length}, leases or not (issue 14). Over the whole run that is the report's theory; over
 * every sub-window it is checked at once as the largest <em>excess</em>: the most admitted in a closed interval
 * {@code [tᵢ, tⱼ]} between two admissions minus {@code rate × (tⱼ − tᵢ)}, which must not exceed the capacity (with
 * {@code eₖ = k − rate × tₖ} for the k-th admission, the excess ending at j is {@code eⱼ − min_{i ≤ j} eᵢ + 1}: one
 * pass). Closed intervals between admissions are the tightest: any window holds the admissions of one such interval
 * and is at least as long.
 *
 * <p>Also per second, as the report gives it: the most admitted in any 1 s window (at most {@code capacity + rate ×
 * 1 s}), and the fewest and most in each whole second of the run from the first check.
 *
 * @param capacity the bucket's capacity
 * @param ratePerMicro refill rate, tokens per µs
 * @param maxExcess largest excess over any interval between two admissions (0 if none was admitted)
 * @param excessFromMicros start of the interval with the largest excess (µs since the first check)
 * @param excessToMicros its end
 * @param excessCount admissions in it
 * @param maxInSecond most admitted in any half-open 1 s window
 * @param wholeSeconds whole seconds of the run from the first check (the last, partial one left out)
 * @param minPerSecond fewest admitted in one of those seconds (0 if there is none)
 * @param maxPerSecond most admitted in one of those seconds
 */
public record UpperBound(long capacity, double ratePerMicro, double maxExcess, long excessFromMicros,
		long excessToMicros, int excessCount, int maxInSecond, int wholeSeconds, int minPerSecond, int maxPerSecond) {

	/** Allowance for floating-point rounding in {@code rate × length}, in tokens. */
	static final double TOLERANCE = 1e-6;

	private static final long SECOND = 1_000_000;

	/**
	 * Check admitted times.
	 * @param capacity the capacity
	 * @param ratePerMicro tokens per µs
	 * @param sortedTimes admission times, ascending, µs since the first check
	 * @param spanMicros from the first check to the last
	 * @return the check
	 */
	static UpperBound of(long capacity, double ratePerMicro, long[] sortedTimes, long spanMicros) {
		double maxExcess = 0;
		long from = 0;
		long to = 0;
		int count = 0;
		double minE = Double.POSITIVE_INFINITY;
		int minAt = 0;
		for (int j = 0; j < sortedTimes.length; j++) {
			double e = j - ratePerMicro * sortedTimes[j];
			if (e < minE) {
				minE = e;
				minAt = j;
			}
			double excess = e - minE + 1;
			if (excess > maxExcess) {
				maxExcess = excess;
				from = sortedTimes[minAt];
				to = sortedTimes[j];
				count = j - minAt + 1;
			}
		}
		int seconds = (int) (spanMicros / SECOND);
		int[] perSecond = new int[seconds];
		for (long t : sortedTimes) {
			int bin = (int) (t / SECOND);
			if (bin < seconds) {
				perSecond[bin]++;
			}
		}
		int min = (seconds == 0) ? 0 : Integer.MAX_VALUE;
		int max = 0;
		for (int c : perSecond) {
			min = Math.min(min, c);
			max = Math.max(max, c);
		}
		return new UpperBound(capacity, ratePerMicro, maxExcess, from, to, count,
				AccuracyAnalysis.maxInWindow(sortedTimes, SECOND), seconds, min, max);
	}

	/**
	 * Whether no interval admitted more than capacity + rate × its length.
	 * @return the verdict
	 */
	public boolean holds() {
		return this.maxExcess <= this.capacity + TOLERANCE;
	}

	/**
	 * The most any 1 s window may admit.
	 * @return capacity + rate × 1 s
	 */
	public double secondLimit() {
		return this.capacity + this.ratePerMicro * SECOND;
	}

	/**
	 * What was exceeded, for a failing run.
	 * @return a message, or {@code null} if the bound holds
	 */
	public String violation() {
		if (holds()) {
			return null;
		}
		return String.format(Locale.ROOT,
				"%d admitted in [%.6f s, %.6f s] (%.3f ms): %.3f over rate × length, above the capacity %d; the "
						+ "bound capacity + rate × t is %.3f there",
				this.excessCount, this.excessFromMicros / 1e6, this.excessToMicros / 1e6,
				(this.excessToMicros - this.excessFromMicros) / 1e3, this.maxExcess, this.capacity,
				this.capacity + this.ratePerMicro * (this.excessToMicros - this.excessFromMicros));
	}

	@Override
	public String toString() {
		return String.format(Locale.ROOT, "upper bound %s (largest excess %.3f of %d, %d admitted in [%.3f s, %.3f s])",
				holds() ? "held" : "EXCEEDED", this.maxExcess, this.capacity, this.excessCount,
				this.excessFromMicros / 1e6, this.excessToMicros / 1e6);
	}

}
