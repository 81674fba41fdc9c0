package io.github.ratelimit.accuracy;

import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.accuracy.GatewayInstance.Sample;
import io.github.ratelimit.gateway.limits.Algorithm;

/**
 * What one run shows: admitted against theory, and the most admitted in any window of the limit's length, all on
 * Redis time (the time the script decided at).
 *
 * <p>Theory is the issue's {@code capacity + rate × t}, with {@code t} the Redis time from the first to the last check
 * of the run: the most a token bucket can admit in {@code t}. The window algorithms' own bound differs from it by at
 * most one window's capacity: a sliding window log admits at most {@code capacity × (⌊t / W⌋ + 1)}, a fixed window
 * {@code capacity} per window touched (the sliding window counter approximates the same).
 *
 * @param plan the plan
 * @param sent checks sent
 * @param errors checks that failed
 * @param admitted checks admitted
 * @param seconds t: Redis time from the first to the last check, in seconds
 * @param theory capacity + rate × t
 * @param bound the algorithm's own bound over the same checks
 * @param maxInWindow most checks admitted in any half-open window [a, a + W)
 * @param reference what one exact single-threaded limiter admits for the same arrivals ({@link ReferenceLimiter})
 * @param longestGapMicros longest time between two consecutive checks (Redis time): a gap longer than a window means
 * the client was not sending for a while (e.g. its instances stalled), so theory was out of reach meanwhile
 * @param latencyP50Micros median round trip of a check
 * @param latencyP99Micros 99th percentile round trip of a check
 * @param admittedTimes Redis times of the admitted checks, ascending, in µs since the first check
 * @param leases the token leases the run used ({@link Leases#OFF} for none)
 * @param leased checks admitted from a lease, without a Redis call (their times are the instance's wall clock)
 * @param redisCalls script calls Redis ran during the run ({@code INFO commandstats}: EVALSHA + EVAL), -1 if not
 * counted
 * @param upperBound the upper bound check on the admitted times ({@link UpperBound})
 */
public record AccuracyAnalysis(Plan plan, int sent, int errors, int admitted, double seconds, double theory,
		long bound, int maxInWindow, int reference, long longestGapMicros, long latencyP50Micros,
		long latencyP99Micros, long[] admittedTimes, Leases leases, int leased, long redisCalls,
		UpperBound upperBound) {

	/**
	 * Analyse the checks of all instances of one run without leases, calls not counted.
	 * @param plan the plan under test
	 * @param samples every check of every instance
	 * @return the analysis
	 */
	public static AccuracyAnalysis of(Plan plan, List<Sample> samples) {
		return of(plan, samples, Leases.OFF, -1);
	}

	/**
	 * Analyse the checks of all instances of one run.
	 * @param plan the plan under test
	 * @param samples every check of every instance
	 * @param leases the token leases the instances used
	 * @param redisCalls script calls Redis ran during the run, -1 if not counted
	 * @return the analysis
	 */
	public static AccuracyAnalysis of(Plan plan, List<Sample> samples, Leases leases, long redisCalls) {
		List<Sample> answered = samples.stream().filter((s) -> !s.error()).toList();
		long first = answered.stream().mapToLong(Sample::redisMicros).min().orElse(0);
		long last = answered.stream().mapToLong(Sample::redisMicros).max().orElse(0);
		long[] admitted = answered.stream().filter(Sample::allowed).mapToLong((s) -> s.redisMicros() - first).sorted()
			.toArray();
		long w = plan.windowMicros();
		double seconds = (last - first) / 1e6;
		double theory = plan.capacity() + plan.ratePerSecond() * seconds;
		long c = plan.capacity();
		long bound = switch (plan.algorithm()) {
			case TOKEN_BUCKET -> (long) Math.floor(theory + 1e-9);
			case SLIDING_WINDOW_LOG -> c * ((last - first) / w + 1);
			case SLIDING_WINDOW_COUNTER, FIXED_WINDOW -> c * (Math.floorDiv(last, w) - Math.floorDiv(first, w) + 1);
			case CONCURRENCY, QUOTA -> throw new IllegalArgumentException(
					"the accuracy run measures rate limits; a concurrency limit or a calendar quota has no rate");
		};
		long[] latencies = answered.stream().mapToLong((s) -> s.recvMicros() - s.sendMicros()).sorted().toArray();
		long[] arrivals = answered.stream().mapToLong(Sample::redisMicros).sorted().toArray();
		long gap = 0;
		for (int i = 1; i < arrivals.length; i++) {
			gap = Math.max(gap, arrivals[i] - arrivals[i - 1]);
		}
		int leased = (int) answered.stream().filter((s) -> s.allowed() && s.leased()).count();
		return new AccuracyAnalysis(plan, samples.size(), samples.size() - answered.size(), admitted.length, seconds,
				theory, bound, maxInWindow(admitted, w), ReferenceLimiter.admitted(plan, arrivals), gap,
				percentile(latencies, 0.50), percentile(latencies, 0.99), admitted, leases.forPlan(plan), leased,
				redisCalls, UpperBound.of(plan.capacity(), plan.ratePerSecond() / 1e6, admitted, last - first));
	}

	/**
	 * How the report names the run: the algorithm, and the leases if on.
	 * @return e.g. {@code token-bucket} or {@code token-bucket, lease 2% for 1s}
	 */
	public String label() {
		String name = this.plan.algorithm().configName();
		return (this.leases != null && this.leases.on()) ? name + ", lease " + this.leases.label() : name;
	}

	/**
	 * Under-admission against theory: how far below {@code capacity + rate × t} the run admitted.
	 * @return (theory − admitted) / theory; negative if above theory
	 */
	public double underAdmission() {
		return (this.theory - this.admitted) / this.theory;
	}

	/**
	 * Whether a token bucket with leases stays within 2% below theory (issue 14).
	 * @return the verdict
	 */
	public boolean meetsLeaseTarget() {
		return underAdmission() <= 0.02;
	}

	/**
	 * Script calls per admitted check.
	 * @return calls ÷ admitted, NaN if calls were not counted or nothing was admitted
	 */
	public double callsPerAdmitted() {
		return (this.redisCalls < 0 || this.admitted == 0) ? Double.NaN : this.redisCalls / (double) this.admitted;
	}

	/**
	 * Relative error of the admitted count against theory.
	 * @return (admitted − theory) / theory
	 */
	public double errorVsTheory() {
		return (this.admitted - this.theory) / this.theory;
	}

	/**
	 * Relative error of the admitted count against the algorithm's own bound.
	 * @return (admitted − bound) / bound
	 */
	public double errorVsBound() {
		return (this.admitted - this.bound) / (double) this.bound;
	}

	/**
	 * Whether the run meets the target for its algorithm: token bucket and sliding log within ±0.5% of
	 * theory, sliding counter within 2%; the fixed window has none (its worst window is reported). A token bucket
	 * with leases: never above theory (see {@link #upperBound()}) and at most 2% below it.
	 * @return the verdict, or {@code null} for the fixed window
	 */
	public Boolean meetsTarget() {
		if (this.leases != null && this.leases.on()) {
			return this.upperBound.holds() && meetsLeaseTarget();
		}
		return switch (this.plan.algorithm()) {
			case TOKEN_BUCKET, SLIDING_WINDOW_LOG -> Math.abs(errorVsTheory()) <= 0.005;
			case SLIDING_WINDOW_COUNTER -> Math.abs(errorVsTheory()) <= 0.02;
			case FIXED_WINDOW, CONCURRENCY, QUOTA -> null;
		};
	}

	/**
	 * The most admitted in any window of the limit's length that an exact limiter would allow.
	 * @return capacity, or capacity + rate × W = twice the capacity for the token bucket
	 */
	public long windowLimit() {
		return (this.plan.algorithm() == Algorithm.TOKEN_BUCKET) ? 2 * this.plan.capacity() : this.plan.capacity();
	}

	/**
	 * For each admitted check, how many were admitted in the window of length W ending at it (inclusive).
	 * @return counts, in the order of {@link #admittedTimes()}
	 */
	public int[] slidingCounts() {
		long w = this.plan.windowMicros();
		int[] counts = new int[this.admittedTimes.length];
		int start = 0;
		for (int i = 0; i < this.admittedTimes.length; i++) {
			while (this.admittedTimes[i] - this.admittedTimes[start] >= w) {
				start++;
			}
			counts[i] = i - start + 1;
		}
		return counts;
	}

	static int maxInWindow(long[] sortedTimes, long w) {
		int max = 0;
		int start = 0;
		for (int i = 0; i < sortedTimes.length; i++) {
			while (sortedTimes[i] - sortedTimes[start] >= w) {
				start++;
			}
			max = Math.max(max, i - start + 1);
		}
		return max;
	}

	private static long percentile(long[] sorted, double p) {
		if (sorted.length == 0) {
			return 0;
		}
		return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof AccuracyAnalysis that && this.plan.equals(that.plan) && this.sent == that.sent
				&& Arrays.equals(this.admittedTimes, that.admittedTimes);
	}

	@Override
	public int hashCode() {
		return this.plan.hashCode() * 31 + Arrays.hashCode(this.admittedTimes);
	}

	@Override
	public String toString() {
		return String.format("%s: sent %d, admitted %d (%d leased), theory %.1f (%+.3f%%), bound %d, max in window %d, "
				+ "%s, Redis calls %d", label(), this.sent, this.admitted, this.leased, this.theory,
				100 * errorVsTheory(), this.bound, this.maxInWindow, this.upperBound, this.redisCalls);
	}

}
