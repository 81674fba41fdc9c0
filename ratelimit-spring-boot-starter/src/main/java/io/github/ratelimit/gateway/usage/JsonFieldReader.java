package io.github.ratelimit.gateway.usage;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads the usage at a {@link UsageField} from a JSON body (RFC 8259, UTF-8) as it passes, chunk by chunk, without
 * buffering it: {@code usage.total_tokens} reads 42 from {@code {"usage":{"total_tokens":42}}}.
 *
 * <p>The field is a path of keys from the root object, which must be an object; keys are compared once unescaped
 * ({@code "\u0075sage"} is {@code usage}), as they are read. Where the path occurs more than once (a duplicate key),
 * the last occurrence is the reading. The value there reads as {@link UsageReading.Kind#FOUND} when it is a number
 * from 0 to {@value UsageReading#MAX_VALUE} once rounded up to a whole number ({@code 41.2} and {@code 4.2e1} read
 * 42), {@link UsageReading.Kind#NEGATIVE} below 0, {@link UsageReading.Kind#TOO_LARGE} above, and
 * {@link UsageReading.Kind#NOT_A_NUMBER} for a string, literal, object, array or a number of more than
 * {@value #MAX_NUMBER_LENGTH} characters (unless it is negative, or its whole part alone is too large). A body that
 * is not JSON in UTF-8 (with or without a leading byte order mark), whose root is not an object, that nests more than {@value #MAX_DEPTH} levels, has anything but whitespace
 * after the root object or ends within it reads {@link UsageReading.Kind#NOT_JSON}; once so, further chunks are not
 * looked at.
 *
 * <p>Memory does not depend on the body: strings are skipped and keys compared byte by byte, nesting is kept as one
 * bit per level, and only the text of a number at the field is kept, at most {@value #MAX_BUFFERED_BYTES} bytes.
 * Not thread-safe: one reader reads one body, given its chunks in order by one thread at a time.
 */
public final class JsonFieldReader {

	/** Most characters of a number at the field that are kept; a longer one is read by its sign and length only. */
	static final int MAX_NUMBER_LENGTH = 64;

	/** Most digits of a whole part below 2^53 (9,007,199,254,740,992 has 16). */
	private static final int MAX_WHOLE_DIGITS = 16;

	/** Most levels of nesting, the root object being the first; deeper, the body reads as not JSON. */
	static final int MAX_DEPTH = 64;

	/**
	 * Most bytes of the body one reader keeps at any time: the text of a number at the field. The rest of a reader's
	 * state is a fixed set of fields whatever the body.
	 */
	public static final int MAX_BUFFERED_BYTES = MAX_NUMBER_LENGTH;

	private static final byte[] BYTE_ORDER_MARK = { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF };

	private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] FALSE = "false".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);

	private final List<String> keys;

	private State state = State.START;

	private boolean ended;

	private int byteOrderMarkLength;

	/** Open objects and arrays, the root object being 1. */
	private int depth;

	/** Bit {@code n} set when the container at depth {@code n + 1} is an array. */
	private long arrays;

	/** How many of the open containers, from the root, lie on the field's path (the root always does). */
	private int depthOnPath;

	/** Whether the last key read is the field's key at its depth, in an object on the path. */
	private boolean keyOnPath;

	private boolean stringIsKey;

	/** Whether the string being read is a key compared with the field's key at its depth. */
	private boolean comparingKey;

	/** How many {@code char}s of the field's key the key being read has matched so far. */
	private int keyMatched;

	private boolean keyDiffers;

	/** Continuation bytes still expected of a UTF-8 sequence in a string. */
	private int utf8Remaining;

	private int utf8CodePoint;

	private int utf8NextMin;

	private int utf8NextMax;

	private int escapeDigits;

	private int escapeUnit;

	private NumberPart numberPart = NumberPart.INTEGER;

	private boolean numberAtField;

	private final byte[] numberText = new byte[MAX_NUMBER_LENGTH];

	private int numberLength;

	private boolean numberTooLong;

	/** Digits of the whole part of the number read so far. */
	private int numberWholeDigits;

	private boolean numberNegative;

	private int bufferedHighWaterMark;

	private byte[] literal = NULL;

	private int literalMatched;

	/** The value at the field's last occurrence so far, {@code null} before the first. */
	private @Nullable UsageReading atField;

	/**
	 * Create a reader of one body.
	 * @param field where the body carries the usage
	 */
	public JsonFieldReader(UsageField field) {
		this.keys = field.keys();
	}

	/**
	 * Read the next chunk of the body, from its position to its limit, without changing its position.
	 * @param chunk the bytes following those of the previous chunk; not kept once this returns
	 * @throws IllegalStateException if {@link #end()} was called
	 */
	public void feed(ByteBuffer chunk) {
		feed(chunk, chunk.position(), chunk.limit());
	}

	/**
	 * Read the bytes of {@code chunk} from index {@code from} (inclusive) to {@code to} (exclusive).
	 */
	void feed(ByteBuffer chunk, int from, int to) {
		if (this.ended) {
			throw new IllegalStateException("The body has ended");
		}
		for (int i = from; i < to && this.state != State.NOT_JSON; i++) {
			accept(chunk.get(i) & 0xFF);
		}
	}

	/**
	 * Mark the body complete: a body that has not ended its root object by now reads as not JSON. Calling it again
	 * has no effect.
	 */
	public void end() {
		this.ended = true;
		if (this.state != State.AFTER_ROOT) {
			this.state = State.NOT_JSON;
		}
	}

	/**
	 * What the body read so far says.
	 * @return {@link UsageReading.Kind#NOT_JSON} once the body is known not to be JSON (an unended body is at
	 * {@link #end()}); else the value at the field's last occurrence so far; else {@link UsageReading.Kind#MISSING}
	 * once ended, {@link UsageReading.Kind#PENDING} before
	 */
	public UsageReading reading() {
		if (this.state == State.NOT_JSON) {
			return UsageReading.notJson();
		}
		if (this.atField != null) {
			return this.atField;
		}
		return this.ended ? UsageReading.missing() : UsageReading.pending();
	}

	/**
	 * The most bytes of the body this reader has kept at once, at most {@link #MAX_BUFFERED_BYTES}.
	 */
	int bufferedHighWaterMark() {
		return this.bufferedHighWaterMark;
	}

	private void accept(int b) {
		switch (this.state) {
			case START -> start(b);
			case BYTE_ORDER_MARK -> byteOrderMark(b);
			case BEFORE_ROOT -> beforeRoot(b);
			case OBJECT_START -> objectStart(b);
			case KEY -> key(b);
			case AFTER_KEY -> afterKey(b);
			case VALUE -> value(b);
			case ARRAY_START -> arrayStart(b);
			case AFTER_VALUE -> afterValue(b);
			case STRING -> string(b);
			case ESCAPE -> escape(b);
			case UNICODE_ESCAPE -> unicodeEscape(b);
			case NUMBER -> number(b);
			case LITERAL -> literal(b);
			case AFTER_ROOT -> afterRoot(b);
			case NOT_JSON -> {
			}
		}
	}

	// Structure

	private void start(int b) {
		if (b == (BYTE_ORDER_MARK[0] & 0xFF)) {
			this.byteOrderMarkLength = 1;
			this.state = State.BYTE_ORDER_MARK;
		}
		else {
			beforeRoot(b);
		}
	}

	private void byteOrderMark(int b) {
		if (b != (BYTE_ORDER_MARK[this.byteOrderMarkLength] & 0xFF)) {
			notJson();
		}
		else if (++this.byteOrderMarkLength == BYTE_ORDER_MARK.length) {
			this.state = State.BEFORE_ROOT;
		}
	}

	private void beforeRoot(int b) {
		if (b == '{') {
			open(false, true);
		}
		else if (isWhitespace(b)) {
			this.state = State.BEFORE_ROOT;
		}
		else {
			notJson();
		}
	}

	private void objectStart(int b) {
		if (b == '}') {
			close(b);
		}
		else {
			key(b);
		}
	}

	private void key(int b) {
		if (b == '"') {
			beginString(true);
		}
		else if (!isWhitespace(b)) {
			notJson();
		}
	}

	private void afterKey(int b) {
		if (b == ':') {
			this.state = State.VALUE;
		}
		else if (!isWhitespace(b)) {
			notJson();
		}
	}

	private void value(int b) {
		if (!isWhitespace(b)) {
			beginValue(b);
		}
	}

	private void arrayStart(int b) {
		if (b == ']') {
			close(b);
		}
		else {
			value(b);
		}
	}

	private void afterValue(int b) {
		if (b == ',') {
			this.state = inArray() ? State.VALUE : State.KEY;
		}
		else if (b == '}' || b == ']') {
			close(b);
		}
		else if (!isWhitespace(b)) {
			notJson();
		}
	}

	private void afterRoot(int b) {
		if (!isWhitespace(b)) {
			notJson();
		}
	}

	private void beginValue(int b) {
		boolean atField = this.keyOnPath && this.depth == this.keys.size();
		boolean towardField = this.keyOnPath && this.depth < this.keys.size();
		this.keyOnPath = false;
		if (atField && b != '-' && (b < '0' || b > '9')) {
			this.atField = UsageReading.notANumber();
		}
		switch (b) {
			case '{' -> open(false, towardField);
			case '[' -> open(true, false);
			case '"' -> beginString(false);
			case 't' -> beginLiteral(TRUE);
			case 'f' -> beginLiteral(FALSE);
			case 'n' -> beginLiteral(NULL);
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9' -> beginNumber(b, atField);
			default -> notJson();
		}
	}

	private void open(boolean array, boolean onPath) {
		if (this.depth == MAX_DEPTH) {
			notJson();
			return;
		}
		if (array) {
			this.arrays |= 1L << this.depth;
		}
		this.depth++;
		if (onPath) {
			this.depthOnPath = this.depth;
		}
		this.state = array ? State.ARRAY_START : State.OBJECT_START;
	}

	private void close(int bracket) {
		if ((bracket == ']') != inArray()) {
			notJson();
			return;
		}
		if (this.depthOnPath == this.depth) {
			this.depthOnPath--;
		}
		this.depth--;
		this.arrays &= ~(1L << this.depth);
		this.state = (this.depth == 0) ? State.AFTER_ROOT : State.AFTER_VALUE;
	}

	private boolean inArray() {
		return (this.arrays & (1L << (this.depth - 1))) != 0;
	}

	private void notJson() {
		this.state = State.NOT_JSON;
	}

	private static boolean isWhitespace(int b) {
		return b == ' ' || b == '\n' || b == '\r' || b == '\t';
	}

	// Strings: skipped, or compared with the field's key as they are read

	private void beginString(boolean key) {
		this.stringIsKey = key;
		this.comparingKey = key && this.depthOnPath == this.depth;
		this.keyMatched = 0;
		this.keyDiffers = false;
		this.state = State.STRING;
	}

	private void string(int b) {
		if (this.utf8Remaining > 0) {
			utf8Continuation(b);
		}
		else if (b == '"') {
			endString();
		}
		else if (b == '\\') {
			this.state = State.ESCAPE;
		}
		else if (b < 0x20) {
			notJson();
		}
		else if (b < 0x80) {
			compare((char) b);
		}
		else {
			utf8Start(b);
		}
	}

	private void endString() {
		if (this.stringIsKey) {
			this.keyOnPath = this.comparingKey && !this.keyDiffers
					&& this.keyMatched == this.keys.get(this.depth - 1).length();
			this.state = State.AFTER_KEY;
		}
		else {
			this.state = State.AFTER_VALUE;
		}
	}

	/**
	 * Start a UTF-8 sequence, with the range of its next byte (RFC 3629 section 4: no overlong form, no surrogate,
	 * nothing above U+10FFFF).
	 */
	private void utf8Start(int b) {
		if (b >= 0xC2 && b <= 0xDF) {
			utf8Sequence(1, b & 0x1F, 0x80, 0xBF);
		}
		else if (b >= 0xE0 && b <= 0xEF) {
			utf8Sequence(2, b & 0x0F, (b == 0xE0) ? 0xA0 : 0x80, (b == 0xED) ? 0x9F : 0xBF);
		}
		else if (b >= 0xF0 && b <= 0xF4) {
			utf8Sequence(3, b & 0x07, (b == 0xF0) ? 0x90 : 0x80, (b == 0xF4) ? 0x8F : 0xBF);
		}
		else {
			notJson();
		}
	}

	private void utf8Sequence(int remaining, int bits, int nextMin, int nextMax) {
		this.utf8Remaining = remaining;
		this.utf8CodePoint = bits;
		this.utf8NextMin = nextMin;
		this.utf8NextMax = nextMax;
	}

	private void utf8Continuation(int b) {
		if (b < this.utf8NextMin || b > this.utf8NextMax) {
			notJson();
			return;
		}
		this.utf8CodePoint = (this.utf8CodePoint << 6) | (b & 0x3F);
		this.utf8NextMin = 0x80;
		this.utf8NextMax = 0xBF;
		if (--this.utf8Remaining == 0) {
			if (Character.isBmpCodePoint(this.utf8CodePoint)) {
				compare((char) this.utf8CodePoint);
			}
			else {
				compare(Character.highSurrogate(this.utf8CodePoint));
				compare(Character.lowSurrogate(this.utf8CodePoint));
			}
		}
	}

	private void escape(int b) {
		this.state = State.STRING;
		switch (b) {
			case '"', '\\', '/' -> compare((char) b);
			case 'b' -> compare('\b');
			case 'f' -> compare('\f');
			case 'n' -> compare('\n');
			case 'r' -> compare('\r');
			case 't' -> compare('\t');
			case 'u' -> {
				this.escapeDigits = 0;
				this.escapeUnit = 0;
				this.state = State.UNICODE_ESCAPE;
			}
			default -> notJson();
		}
	}

	/**
	 * A digit of a {@code \}{@code uXXXX} escape: a UTF-16 code unit, compared as such (a surrogate pair being two
	 * escapes).
	 */
	private void unicodeEscape(int b) {
		int digit = hexDigit(b);
		if (digit < 0) {
			notJson();
			return;
		}
		this.escapeUnit = (this.escapeUnit << 4) | digit;
		if (++this.escapeDigits == 4) {
			compare((char) this.escapeUnit);
			this.state = State.STRING;
		}
	}

	private static int hexDigit(int b) {
		if (b >= '0' && b <= '9') {
			return b - '0';
		}
		if (b >= 'a' && b <= 'f') {
			return b - 'a' + 10;
		}
		return (b >= 'A' && b <= 'F') ? b - 'A' + 10 : -1;
	}

	private void compare(char c) {
		if (!this.comparingKey || this.keyDiffers) {
			return;
		}
		String key = this.keys.get(this.depth - 1);
		if (this.keyMatched < key.length() && key.charAt(this.keyMatched) == c) {
			this.keyMatched++;
		}
		else {
			this.keyDiffers = true;
		}
	}

	// Numbers: checked as they are read; at the field, their text kept

	private void beginNumber(int b, boolean atField) {
		this.numberAtField = atField;
		this.numberLength = 0;
		this.numberTooLong = false;
		this.numberNegative = b == '-';
		this.numberPart = (b == '-') ? NumberPart.MINUS : (b == '0') ? NumberPart.ZERO : NumberPart.INTEGER;
		this.numberWholeDigits = (b == '-') ? 0 : 1;
		keepNumberText(b);
		this.state = State.NUMBER;
	}

	private void number(int b) {
		NumberPart next = this.numberPart.next(b);
		if (next != null) {
			if (next == NumberPart.INTEGER || next == NumberPart.ZERO) {
				this.numberWholeDigits++;
			}
			this.numberPart = next;
			keepNumberText(b);
		}
		else if (this.numberPart.canEnd()) {
			endNumber();
			this.state = State.AFTER_VALUE;
			afterValue(b);
		}
		else {
			notJson();
		}
	}

	private void keepNumberText(int b) {
		if (!this.numberAtField) {
			return;
		}
		if (this.numberLength == MAX_NUMBER_LENGTH) {
			this.numberTooLong = true;
			return;
		}
		this.numberText[this.numberLength++] = (byte) b;
		this.bufferedHighWaterMark = Math.max(this.bufferedHighWaterMark, this.numberLength);
	}

	/**
	 * The reading of the number at the field. One too long to keep is negative when it is, too large when its whole
	 * part has more than {@value #MAX_WHOLE_DIGITS} digits (at least 10^16, above 2^53), and else not read as a number.
	 */
	private void endNumber() {
		if (!this.numberAtField) {
			return;
		}
		if (!this.numberTooLong) {
			this.atField = JsonNumber.read(new String(this.numberText, 0, this.numberLength, StandardCharsets.US_ASCII));
		}
		else if (this.numberNegative) {
			this.atField = UsageReading.negative();
		}
		else {
			this.atField = (this.numberWholeDigits > MAX_WHOLE_DIGITS) ? UsageReading.tooLarge()
					: UsageReading.notANumber();
		}
	}

	// Literals

	private void beginLiteral(byte[] literal) {
		this.literal = literal;
		this.literalMatched = 1;
		this.state = State.LITERAL;
	}

	private void literal(int b) {
		if (b != this.literal[this.literalMatched]) {
			notJson();
		}
		else if (++this.literalMatched == this.literal.length) {
			this.state = State.AFTER_VALUE;
		}
	}

	private enum State {

		/** Nothing read yet: a byte order mark, whitespace or the root object's {@code {}. */
		START,

		/** Within a byte order mark. */
		BYTE_ORDER_MARK,

		/** Whitespace or the root object's {@code {}. */
		BEFORE_ROOT,

		/** After an object's {@code {}: a key or {@code }}. */
		OBJECT_START,

		/** After a {@code ,} in an object: a key. */
		KEY,

		/** After a key: {@code :}. */
		AFTER_KEY,

		/** After a {@code :} or a {@code ,} in an array: a value. */
		VALUE,

		/** After an array's {@code [}: a value or {@code ]}. */
		ARRAY_START,

		/** After a value: {@code ,} or the end of its object or array. */
		AFTER_VALUE,

		/** Within a key or string value. */
		STRING,

		/** After a {@code \} in a string. */
		ESCAPE,

		/** Within the four hexadecimal digits of a {@code \}{@code u} escape. */
		UNICODE_ESCAPE,

		/** Within a number. */
		NUMBER,

		/** Within {@code true}, {@code false} or {@code null}. */
		LITERAL,

		/** After the root object: whitespace only. */
		AFTER_ROOT,

		/** Not JSON: nothing more is read. */
		NOT_JSON

	}

	/**
	 * The part of a number read so far (RFC 8259 section 6: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)?
	 * ([eE] [+-]? [0-9]+)?}).
	 */
	private enum NumberPart {

		MINUS, ZERO, INTEGER, POINT, FRACTION, EXPONENT_MARK, EXPONENT_SIGN, EXPONENT;

		/**
		 * The part that {@code b} continues the number into, or {@code null} if it does not continue it.
		 */
		@Nullable NumberPart next(int b) {
			boolean digit = b >= '0' && b <= '9';
			boolean exponentMark = b == 'e' || b == 'E';
			return switch (this) {
				case MINUS -> (b == '0') ? ZERO : digit ? INTEGER : null;
				case ZERO -> (b == '.') ? POINT : exponentMark ? EXPONENT_MARK : null;
				case INTEGER -> digit ? INTEGER : (b == '.') ? POINT : exponentMark ? EXPONENT_MARK : null;
				case POINT, FRACTION -> digit ? FRACTION : (this == FRACTION && exponentMark) ? EXPONENT_MARK : null;
				case EXPONENT_MARK -> (b == '+' || b == '-') ? EXPONENT_SIGN : digit ? EXPONENT : null;
				case EXPONENT_SIGN, EXPONENT -> digit ? EXPONENT : null;
			};
		}

		/**
		 * Whether a number may end after this part.
		 */
		boolean canEnd() {
			return this == ZERO || this == INTEGER || this == FRACTION || this == EXPONENT;
		}

	}

}
