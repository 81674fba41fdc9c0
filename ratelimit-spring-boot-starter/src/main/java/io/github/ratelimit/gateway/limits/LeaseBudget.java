package io.github.ratelimit.gateway.limits;

import java.math.BigDecimal;

/**
 * A limit's token lease budget: the most tokens one gateway instance may take ahead from the shared bucket in one
 * lease, in percent of the bucket's capacity, or {@link #OFF}. Written as a limit's {@code lease} property is:
 * {@code off} or {@code N%} with N above 0, e.g. {@code 2%}. A {@link LimitDefinition} takes at most
 * {@value LimitDefinition#MAX_LEASE_BUDGET_PERCENT} percent, on a token bucket only.
 *
 * @param percent the budget in percent of the capacity: 0 ({@link #OFF}: no leases) or above 0, finite
 */
public record LeaseBudget(double percent) {

	/** No token leases: every request asks the shared store. */
	public static final LeaseBudget OFF = new LeaseBudget(0);

	/**
	 * Validate the percentage.
	 * @throws IllegalArgumentException if {@code percent} is negative, NaN or infinite
	 */
	public LeaseBudget {
		if (!(percent >= 0 && percent < Double.POSITIVE_INFINITY)) {
			throw new IllegalArgumentException("a lease budget is 0 (off) or a percentage above 0, was " + percent);
		}
	}

	/**
	 * The budget a limit's {@code lease} property gives; Spring's conversion service calls it to bind the property.
	 * @param text {@code off} (any case) or blank for {@link #OFF}; else {@code N%} with N a decimal number above 0,
	 * blanks around it allowed ({@code 2%}, {@code 2.5%}, {@code 0.5 %})
	 * @return the budget
	 * @throws IllegalArgumentException for any other text ({@code 2} without {@code %}, {@code 0%}, {@code x%}), with
	 * a message saying what to write
	 */
	public static LeaseBudget of(String text) {
		String value = text.strip();
		if (value.isEmpty() || value.equalsIgnoreCase("off")) {
			return OFF;
		}
		if (value.endsWith("%")) {
			try {
				double percent = Double.parseDouble(value.substring(0, value.length() - 1).strip());
				if (percent > 0 && percent < Double.POSITIVE_INFINITY) {
					return new LeaseBudget(percent);
				}
			}
			catch (NumberFormatException ex) {
				// not a number: refused below
			}
		}
		throw new IllegalArgumentException("must be off or a percentage above 0% and at most 50% of the capacity, was '"
				+ text + "'. Fix: set e.g. lease: 2% (a lease holds at most 2% of the capacity), or leave it out.");
	}

	/**
	 * Whether this is {@link #OFF}.
	 * @return {@code true} when the limit takes no leases
	 */
	public boolean isOff() {
		return this.percent == 0;
	}

	/**
	 * The budget as a limit's {@code lease} property is written, which {@link #of(String)} reads back.
	 * @return {@code off}, or the percentage without trailing zeros and a {@code %} sign, e.g. {@code 2%} or
	 * {@code 2.5%}
	 */
	@Override
	public String toString() {
		return isOff() ? "off" : BigDecimal.valueOf(this.percent).stripTrailingZeros().toPlainString() + "%";
	}

}
