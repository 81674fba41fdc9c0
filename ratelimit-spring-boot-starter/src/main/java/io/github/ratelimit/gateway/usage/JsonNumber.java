package io.github.ratelimit.gateway.usage;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * The usage a JSON number denotes: the number rounded up to a whole number.
 */
final class JsonNumber {

	private static final BigDecimal MAX_VALUE = BigDecimal.valueOf(UsageReading.MAX_VALUE);

	/**
	 * Beyond this exponent every number of at most {@value JsonFieldReader#MAX_NUMBER_LENGTH} characters other than
	 * 0 is either above {@value UsageReading#MAX_VALUE} or within (0, 1), so larger exponents are read as this one.
	 */
	private static final int EXPONENT_BOUND = 1000;

	private JsonNumber() {
	}

	/**
	 * Read a number.
	 * @param text a number as RFC 8259 section 6 writes it, such as {@code 41.2} or {@code 4.2e1}
	 * @return {@link UsageReading#found(long)} with the number rounded up to a whole number,
	 * {@link UsageReading#negative()} below 0 (and above -1), or {@link UsageReading#tooLarge()} above
	 * {@value UsageReading#MAX_VALUE} once rounded up
	 * @throws NumberFormatException if {@code text} is not such a number
	 */
	static UsageReading read(String text) {
		BigDecimal number = parse(text);
		if (number.signum() < 0) {
			return UsageReading.negative();
		}
		if (number.compareTo(MAX_VALUE) > 0) {
			return UsageReading.tooLarge();
		}
		BigDecimal whole = number.setScale(0, RoundingMode.CEILING);
		return (whole.compareTo(MAX_VALUE) > 0) ? UsageReading.tooLarge() : UsageReading.found(whole.longValueExact());
	}

	private static BigDecimal parse(String text) {
		int mark = Math.max(text.indexOf('e'), text.indexOf('E'));
		if (mark < 0) {
			return new BigDecimal(text);
		}
		return new BigDecimal(text.substring(0, mark)).scaleByPowerOfTen(exponent(text.substring(mark + 1)));
	}

	private static int exponent(String text) {
		boolean negative = text.startsWith("-");
		String digits = (negative || text.startsWith("+")) ? text.substring(1) : text;
		int exponent = (digits.replaceFirst("^0+", "").length() > 4) ? EXPONENT_BOUND
				: Math.min(Integer.parseInt(digits), EXPONENT_BOUND);
		return negative ? -exponent : exponent;
	}

}
