package io.github.ratelimit.gateway.usage;

import java.nio.ByteBuffer;

/**
 * Reads the usage at a {@link UsageField} from a {@code text/event-stream} body as it passes, chunk by chunk,
 * without buffering it: the data of the last event that carries the field, such as
 * {@code data: {"usage":{"total_tokens":57}}} before {@code data: [DONE]}.
 *
 * <p>The stream is parsed as the WHATWG HTML standard reads server-sent events: lines end with CRLF, LF or CR; a
 * leading byte order mark is skipped; a line starting with {@code :} is a comment; a {@code data} line's value is what
 * follows {@code data:}, less one leading space, the values of an event's data lines joined with LF; other fields are
 * ignored; an empty line dispatches the event, and an event not dispatched when the stream ends is discarded.
 *
 * <p>Each event's data is read as it arrives by a {@link JsonFieldReader} of its own. An event whose data has the
 * field, whatever the value there ({@link UsageReading.Kind#FOUND}, {@link UsageReading.Kind#NEGATIVE},
 * {@link UsageReading.Kind#NOT_A_NUMBER} or {@link UsageReading.Kind#TOO_LARGE}), gives the stream's reading, the
 * last such event winning; events whose data is not JSON or lacks the field leave it as it was.
 *
 * <p>Memory does not depend on the body: a line's field name is matched against {@code data} byte by byte and no
 * line or event is kept, so a reader keeps at most {@value #MAX_BUFFERED_BYTES} bytes of the body, those of its
 * current event's {@link JsonFieldReader}. Not thread-safe: one reader reads one body, given its chunks in order by
 * one thread at a time.
 */
public final class EventStreamReader {

	/** Most bytes of the body one reader keeps at any time: those of one {@link JsonFieldReader}. */
	public static final int MAX_BUFFERED_BYTES = JsonFieldReader.MAX_BUFFERED_BYTES;

	private static final byte[] DATA = { 'd', 'a', 't', 'a' };

	private static final byte[] BYTE_ORDER_MARK = { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF };

	private static final ByteBuffer LINE_FEED = ByteBuffer.wrap(new byte[] { '\n' }).asReadOnlyBuffer();

	private final UsageField field;

	private Line line = Line.FIELD_NAME;

	/** How many bytes of {@code data} the line's field name has matched so far. */
	private int fieldNameMatched;

	/** Bytes of a leading byte order mark read so far, {@code BYTE_ORDER_MARK.length} once past it. */
	private int byteOrderMarkRead;

	/** Whether the last byte was a CR, so that an LF right after it ends no other line. */
	private boolean afterCarriageReturn;

	/** Reads the data of the event being received. */
	private JsonFieldReader event;

	/** Whether the event being received has a data line. */
	private boolean eventHasData;

	private UsageReading atField = UsageReading.pending();

	private boolean ended;

	private int bufferedHighWaterMark;

	/**
	 * Create a reader of one stream.
	 * @param field where an event's data carries the usage
	 */
	public EventStreamReader(UsageField field) {
		this.field = field;
		this.event = new JsonFieldReader(field);
	}

	/**
	 * Read the next chunk of the stream, from its position to its limit, without changing its position.
	 * @param chunk the bytes following those of the previous chunk; not kept once this returns
	 * @throws IllegalStateException if {@link #end()} was called
	 */
	public void feed(ByteBuffer chunk) {
		if (this.ended) {
			throw new IllegalStateException("The stream has ended");
		}
		int i = chunk.position();
		while (i < chunk.limit()) {
			i = accept(chunk, i);
		}
	}

	/**
	 * Mark the stream complete, discarding an event not yet dispatched. Calling it again has no effect.
	 */
	public void end() {
		this.ended = true;
	}

	/**
	 * What the stream read so far says.
	 * @return the reading of the last dispatched event that had the field; else {@link UsageReading.Kind#MISSING}
	 * once ended, {@link UsageReading.Kind#PENDING} before
	 */
	public UsageReading reading() {
		if (this.atField.kind() == UsageReading.Kind.PENDING && this.ended) {
			return UsageReading.missing();
		}
		return this.atField;
	}

	/**
	 * The most bytes of the stream this reader has kept at once, at most {@link #MAX_BUFFERED_BYTES}.
	 */
	int bufferedHighWaterMark() {
		return Math.max(this.bufferedHighWaterMark, this.event.bufferedHighWaterMark());
	}

	/**
	 * Read from index {@code i}: one byte, or the run of a data value up to the end of its line or chunk.
	 * @return the index of the first byte not read
	 */
	private int accept(ByteBuffer chunk, int i) {
		int b = chunk.get(i) & 0xFF;
		if (skipByteOrderMark(b)) {
			return i + 1;
		}
		if (b == '\n' && this.afterCarriageReturn) {
			this.afterCarriageReturn = false;
			return i + 1;
		}
		this.afterCarriageReturn = (b == '\r');
		if (b == '\r' || b == '\n') {
			endLine();
			return i + 1;
		}
		switch (this.line) {
			case FIELD_NAME -> fieldName(b);
			case DATA_VALUE_START -> {
				this.line = Line.DATA_VALUE;
				return (b == ' ') ? i + 1 : dataValue(chunk, i);
			}
			case DATA_VALUE -> {
				return dataValue(chunk, i);
			}
			case IGNORED -> {
			}
		}
		return i + 1;
	}

	/**
	 * Whether {@code b} is part of a byte order mark at the start of the stream. Bytes of a partial mark are a
	 * line's first bytes, so that line is ignored.
	 */
	private boolean skipByteOrderMark(int b) {
		if (this.byteOrderMarkRead == BYTE_ORDER_MARK.length) {
			return false;
		}
		if (b == (BYTE_ORDER_MARK[this.byteOrderMarkRead] & 0xFF)) {
			this.byteOrderMarkRead++;
			return true;
		}
		if (this.byteOrderMarkRead > 0) {
			this.line = Line.IGNORED;
		}
		this.byteOrderMarkRead = BYTE_ORDER_MARK.length;
		return false;
	}

	private void fieldName(int b) {
		if (b == ':') {
			if (this.fieldNameMatched == DATA.length) {
				beginDataLine();
				this.line = Line.DATA_VALUE_START;
			}
			else {
				// a comment (nothing before the colon) or a field other than data
				this.line = Line.IGNORED;
			}
		}
		else if (this.fieldNameMatched < DATA.length && b == DATA[this.fieldNameMatched]) {
			this.fieldNameMatched++;
		}
		else {
			this.line = Line.IGNORED;
		}
	}

	private int dataValue(ByteBuffer chunk, int from) {
		int to = from;
		while (to < chunk.limit() && chunk.get(to) != '\n' && chunk.get(to) != '\r') {
			to++;
		}
		this.event.feed(chunk, from, to);
		return to;
	}

	private void endLine() {
		if (this.line == Line.FIELD_NAME) {
			if (this.fieldNameMatched == 0) {
				dispatch();
			}
			else if (this.fieldNameMatched == DATA.length) {
				// "data" with no colon: a data line with an empty value
				beginDataLine();
			}
		}
		this.line = Line.FIELD_NAME;
		this.fieldNameMatched = 0;
	}

	private void beginDataLine() {
		if (this.eventHasData) {
			this.event.feed(LINE_FEED, 0, 1);
		}
		this.eventHasData = true;
	}

	private void dispatch() {
		if (!this.eventHasData) {
			return;
		}
		this.event.end();
		UsageReading reading = this.event.reading();
		if (reading.kind() != UsageReading.Kind.NOT_JSON && reading.kind() != UsageReading.Kind.MISSING) {
			this.atField = reading;
		}
		this.bufferedHighWaterMark = Math.max(this.bufferedHighWaterMark, this.event.bufferedHighWaterMark());
		this.event = new JsonFieldReader(this.field);
		this.eventHasData = false;
	}

	private enum Line {

		/** At the start of a line, or within a field name that matches {@code data} so far. */
		FIELD_NAME,

		/** Right after {@code data:}: an optional space, then the value. */
		DATA_VALUE_START,

		/** Within a data line's value. */
		DATA_VALUE,

		/** Within a comment or a field other than {@code data}. */
		IGNORED

	}

}
