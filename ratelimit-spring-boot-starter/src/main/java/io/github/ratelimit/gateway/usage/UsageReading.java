package io.github.ratelimit.gateway.usage;

import java.util.regex.Pattern;

/**
 * What a reader made of an answer's usage: a number found at the {@link UsageField}, or why there is none.
 *
 * @param kind what was read
 * @param value the usage for {@link Kind#FOUND}, 0 to {@value #MAX_VALUE}; 0 for every other kind
 */
public record UsageReading(Kind kind, long value) {

	/** Largest usage a reading holds: 2<sup>53</sup> (9007199254740992). */
	public static final long MAX_VALUE = 1L << 53;

	/** RFC 8259 section 6: a number. */
	private static final Pattern NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");

	private static final UsageReading MISSING = new UsageReading(Kind.MISSING, 0);

	private static final UsageReading NOT_JSON = new UsageReading(Kind.NOT_JSON, 0);

	private static final UsageReading NOT_A_NUMBER = new UsageReading(Kind.NOT_A_NUMBER, 0);

	private static final UsageReading NEGATIVE = new UsageReading(Kind.NEGATIVE, 0);

	private static final UsageReading TOO_LARGE = new UsageReading(Kind.TOO_LARGE, 0);

	private static final UsageReading PENDING = new UsageReading(Kind.PENDING, 0);

	private static final UsageReading ENCODED = new UsageReading(Kind.ENCODED, 0);

	/**
	 * Create a reading.
	 * @throws IllegalArgumentException if {@code kind} is {@link Kind#FOUND} and {@code value} is not within 0 to
	 * {@value #MAX_VALUE}, or another kind with a {@code value} other than 0
	 */
	public UsageReading {
		if (kind == Kind.FOUND && (value < 0 || value > MAX_VALUE)) {
			throw new IllegalArgumentException("A usage found is 0 to " + MAX_VALUE + ", was " + value);
		}
		if (kind != Kind.FOUND && value != 0) {
			throw new IllegalArgumentException("Only a usage found has a value, " + kind + " had " + value);
		}
	}

	/**
	 * A number at the field.
	 * @param value the number rounded up to a whole number, 0 to {@value #MAX_VALUE}
	 * @return the reading
	 * @throws IllegalArgumentException if {@code value} is out of range
	 */
	public static UsageReading found(long value) {
		return new UsageReading(Kind.FOUND, value);
	}

	/**
	 * A number written as text (a header field's value), by the rules of a number at a JSON field: RFC 8259's number
	 * syntax, rounded up to a whole number.
	 * @param text the text, without surrounding whitespace
	 * @return {@link #found(long)}, {@link #negative()} or {@link #tooLarge()} for a number; {@link #notANumber()}
	 * for anything else, and for a number written with more than {@value JsonFieldReader#MAX_BUFFERED_BYTES}
	 * characters
	 */
	public static UsageReading ofText(String text) {
		if (text.length() > JsonFieldReader.MAX_BUFFERED_BYTES || !NUMBER.matcher(text).matches()) {
			return notANumber();
		}
		return JsonNumber.read(text);
	}

	/**
	 * The answer ended without the field.
	 * @return the reading
	 */
	public static UsageReading missing() {
		return MISSING;
	}

	/**
	 * The answer is not what the reader reads (malformed JSON, or JSON whose root is not an object).
	 * @return the reading
	 */
	public static UsageReading notJson() {
		return NOT_JSON;
	}

	/**
	 * The field holds something other than a number, or a number longer than a reader keeps.
	 * @return the reading
	 */
	public static UsageReading notANumber() {
		return NOT_A_NUMBER;
	}

	/**
	 * The field holds a number below 0.
	 * @return the reading
	 */
	public static UsageReading negative() {
		return NEGATIVE;
	}

	/**
	 * The field holds a number above {@value #MAX_VALUE} once rounded up.
	 * @return the reading
	 */
	public static UsageReading tooLarge() {
		return TOO_LARGE;
	}

	/**
	 * The answer's body is in a content coding that is not decoded, or did not decode ({@link InflatingFeed}).
	 * @return the reading
	 */
	public static UsageReading encoded() {
		return ENCODED;
	}

	/**
	 * The answer has not ended and the field has not been seen yet.
	 * @return the reading
	 */
	public static UsageReading pending() {
		return PENDING;
	}

	/**
	 * What a reader made of an answer's usage.
	 */
	public enum Kind {

		/** A number at the field, 0 to {@value UsageReading#MAX_VALUE} once rounded up to a whole number. */
		FOUND,

		/** The answer ended without the field. */
		MISSING,

		/** The answer is not JSON, or its root is not an object. */
		NOT_JSON,

		/**
		 * The field holds a string, {@code true}, {@code false}, {@code null}, an object, an array, or a number whose
		 * text is longer than a reader keeps.
		 */
		NOT_A_NUMBER,

		/** The field holds a number below 0. */
		NEGATIVE,

		/** The field holds a number above {@value UsageReading#MAX_VALUE} once rounded up. */
		TOO_LARGE,

		/** The answer has not ended and the field has not been seen yet. */
		PENDING,

		/**
		 * The answer's body is in a content coding that is not decoded ({@code br}, {@code zstd}, an unknown one, or
		 * several), or did not decode: data that is not what its {@code gzip} or {@code deflate} coding says, or more
		 * than {@value InflatingFeed#MAX_DECODED_BYTES} bytes once decoded.
		 */
		ENCODED

	}

}
