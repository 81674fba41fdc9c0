package io.github.ratelimit.accuracy;

import java.time.Duration;
import java.util.Locale;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;

/**
 * Token leases for a run ({@code --lease 2%}, {@code --lease-duration 1s}): the limit's {@code lease} budget in percent
 * of the capacity ({@link LimitDefinition#leaseBudget()}, 0 = off) and {@code ratelimit.leases.duration}.
 * Leases apply to token buckets only: a run of another algorithm ignores them.
 *
 * @param budgetPercent lease budget in percent of the capacity (0: off; above 0 and at most
 * {@value LimitDefinition#MAX_LEASE_BUDGET_PERCENT})
 * @param duration how long an instance may spend a lease ({@code ratelimit.leases.duration})
 */
public record Leases(double budgetPercent, Duration duration) {

	/** The starter's default {@code ratelimit.leases.duration}. */
	public static final Duration DEFAULT_DURATION = Duration.ofSeconds(1);

	/** The starter's default {@code ratelimit.leases.max-entries}. */
	public static final long MAX_ENTRIES = 100_000;

	/** No leases: every check asks Redis (the harness as before leases). */
	public static final Leases OFF = new Leases(0, DEFAULT_DURATION);

	/**
	 * Validate.
	 * @throws IllegalArgumentException if the budget is out of range or the duration not positive
	 */
	public Leases {
		if (!(budgetPercent >= 0 && budgetPercent <= LimitDefinition.MAX_LEASE_BUDGET_PERCENT)) {
			throw new IllegalArgumentException("--lease takes off or a percentage above 0% and at most "
					+ trim(LimitDefinition.MAX_LEASE_BUDGET_PERCENT) + "% of the capacity, was " + budgetPercent);
		}
		if (duration == null || duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException("--lease-duration must be positive, was " + duration);
		}
	}

	/**
	 * Parse the value of {@code --lease} as the starter parses a limit's {@code lease}: {@code off} (or blank) is 0,
	 * {@code N%} is N.
	 * @param value e.g. {@code 2%}, {@code 0.5%} or {@code off}
	 * @return the budget in percent of the capacity
	 * @throws IllegalArgumentException if it is neither, or out of range
	 */
	static double parseBudget(String value) {
		String v = (value == null) ? "" : value.strip().toLowerCase(Locale.ROOT);
		if (v.isEmpty() || v.equals("off")) {
			return 0;
		}
		if (!v.endsWith("%")) {
			throw new IllegalArgumentException("--lease takes off or a percentage such as 2%, was '" + value + "'");
		}
		double percent;
		try {
			percent = Double.parseDouble(v.substring(0, v.length() - 1).strip());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("--lease takes off or a percentage such as 2%, was '" + value + "'");
		}
		if (!(percent > 0 && percent <= LimitDefinition.MAX_LEASE_BUDGET_PERCENT)) {
			throw new IllegalArgumentException("--lease takes a percentage above 0% and at most "
					+ trim(LimitDefinition.MAX_LEASE_BUDGET_PERCENT) + "%, was '" + value + "'");
		}
		return percent;
	}

	/**
	 * Whether leases are on.
	 * @return budget above 0
	 */
	public boolean on() {
		return this.budgetPercent > 0;
	}

	/**
	 * The leases a run of this algorithm uses: these for a token bucket, none for the window algorithms.
	 * @param plan the plan
	 * @return the leases
	 */
	Leases forPlan(Plan plan) {
		return (plan.algorithm() == Algorithm.TOKEN_BUCKET) ? this : OFF;
	}

	/**
	 * How the report names them.
	 * @return {@code off}, or e.g. {@code 2% for 1s}
	 */
	String label() {
		return on() ? trim(this.budgetPercent) + "% for " + AccuracyRun.formatDuration(this.duration) : "off";
	}

	private static String trim(double value) {
		return (value == Math.rint(value)) ? Long.toString((long) value) : Double.toString(value);
	}

}
