package io.github.ratelimit.gateway.usage;

import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

import org.jspecify.annotations.Nullable;

/**
 * Decodes a compressed answer's body for a usage reader, chunk by chunk as it passes: {@code gzip} (RFC 1952, every
 * member of the body in turn, as the JDK's own decoder reads them) and {@code deflate} (RFC 9110: zlib, RFC 1950). The body itself is neither changed nor held: each
 * chunk is read from a view of it, and only the decoded bytes go to the reader, in pieces of at most
 * {@value #PIECE_BYTES} bytes. At most {@value #MAX_DECODED_BYTES} decoded bytes are produced, whatever the
 * compression ratio (a body that decodes to more, a zip bomb, costs at most that much inflating); beyond them, or on
 * data that is not what its coding says, decoding stops and {@link #failed()} tells. Not thread-safe: its caller
 * holds a lock.
 */
public final class InflatingFeed {

	/** Most decoded bytes produced from one body: 16 MiB. */
	public static final long MAX_DECODED_BYTES = 16L * 1024 * 1024;

	/** Size of the buffer decoded bytes are produced into (its only buffer besides the inflater's own state). */
	public static final int PIECE_BYTES = 8192;

	private static final int FHCRC = 2;

	private static final int FEXTRA = 4;

	private static final int FNAME = 8;

	private static final int FCOMMENT = 16;

	private final Consumer<ByteBuffer> reader;

	private final Inflater inflater;

	private final byte[] piece = new byte[PIECE_BYTES];

	/** Whether a gzip header is still being read. */
	private boolean inHeader;

	/** Bytes of the gzip header's fixed part read, 0 to 10. */
	private int fixed;

	/** The optional part of the gzip header being read (its flag), once the fixed part is read. */
	private int part;

	private int flags;

	private int extraLength;

	private int extraLengthBytes;

	private int crcBytes;

	/** Whether the inflater decodes gzip members (each followed by a trailer, and maybe another member). */
	private final boolean gzip;

	/** Bytes of the current gzip member's trailer (CRC-32 and size, 8 bytes) still to skip. */
	private int trailer;

	/** Whether a member has ended: what follows must be another member, or decoding stops there. */
	private boolean afterMember;

	private long decoded;

	private boolean failed;

	private boolean ended;

	private InflatingFeed(boolean gzip, Consumer<ByteBuffer> reader) {
		this.reader = reader;
		this.inflater = new Inflater(gzip);
		this.gzip = gzip;
		this.inHeader = gzip;
	}

	/**
	 * A feed for a body in this content coding, if it is one this class decodes.
	 * @param coding the answer's {@code Content-Encoding} value (one coding; case ignored)
	 * @param reader where the decoded bytes go
	 * @return the feed, or {@code null} for any coding but {@code gzip}, {@code x-gzip} and {@code deflate}
	 */
	public static @Nullable InflatingFeed of(String coding, Consumer<ByteBuffer> reader) {
		return switch (coding.strip().toLowerCase(Locale.ROOT)) {
			case "gzip", "x-gzip" -> new InflatingFeed(true, reader);
			case "deflate" -> new InflatingFeed(false, reader);
			default -> null;
		};
	}

	/**
	 * Decode a chunk of the body and give the reader what it decodes to.
	 * @param chunk the compressed bytes; read, never changed (its position is left alone)
	 */
	public void feed(ByteBuffer chunk) {
		ByteBuffer input = chunk.duplicate();
		while (!this.failed && !this.ended && input.hasRemaining()) {
			if (this.trailer > 0) {
				int skipped = Math.min(this.trailer, input.remaining());
				input.position(input.position() + skipped);
				this.trailer -= skipped;
				if (this.trailer == 0) {
					nextMember();
				}
			}
			else if (this.inHeader) {
				readHeader(input.get() & 0xff);
			}
			else if (this.inflater.finished()) {
				end(); // a zlib stream is one stream: anything after it is not read
			}
			else {
				inflate(input);
			}
		}
	}

	/** Inflate what the input holds (advancing it), up to its end or the end of the member or stream. */
	private void inflate(ByteBuffer input) {
		this.inflater.setInput(input);
		try {
			while (!this.inflater.finished() && !this.inflater.needsInput()) {
				int length = this.inflater.inflate(this.piece);
				if (length == 0 && this.inflater.needsDictionary()) {
					fail();
					return;
				}
				this.decoded += length;
				if (this.decoded > MAX_DECODED_BYTES) {
					fail();
					return;
				}
				if (length > 0) {
					this.reader.accept(ByteBuffer.wrap(this.piece, 0, length));
				}
			}
		}
		catch (DataFormatException ex) {
			fail();
			return;
		}
		if (this.inflater.finished() && this.gzip) {
			this.trailer = 8;
		}
	}

	/** A gzip member and its trailer are over: what follows is read as the next member's header. */
	private void nextMember() {
		this.inflater.reset();
		this.afterMember = true;
		this.inHeader = true;
		this.fixed = 0;
		this.part = 0;
		this.flags = 0;
		this.extraLength = 0;
		this.extraLengthBytes = 0;
		this.crcBytes = 0;
	}

	/**
	 * Whether decoding stopped: the data was not what its coding says, or it decoded to more than
	 * {@value #MAX_DECODED_BYTES} bytes.
	 * @return whether the reader saw only part of the body, or nothing of it
	 */
	public boolean failed() {
		return this.failed;
	}

	/** Free the inflater (once; later chunks are ignored). */
	public void end() {
		if (!this.ended) {
			this.ended = true;
			this.inflater.end();
		}
	}

	private void fail() {
		this.failed = true;
		end();
	}

	/** One byte of a gzip header (RFC 1952 section 2.3): checked, skipped. */
	private void readHeader(int b) {
		if (this.fixed < 10) {
			if ((this.fixed == 0 && b != 0x1f) || (this.fixed == 1 && b != 0x8b) || (this.fixed == 2 && b != 8)) {
				if (this.afterMember) {
					end(); // bytes after the last member that do not start another: not read (as the JDK does)
				}
				else {
					fail();
				}
				return;
			}
			if (this.fixed == 3) {
				this.flags = b;
			}
			this.fixed++;
			if (this.fixed == 10) {
				nextHeaderPart(0);
			}
			return;
		}
		if (this.part == FEXTRA) {
			readExtra(b);
		}
		else if ((this.part == FNAME || this.part == FCOMMENT) && b == 0) {
			nextHeaderPart(this.part);
		}
		else if (this.part == FHCRC && ++this.crcBytes == 2) {
			nextHeaderPart(FHCRC);
		}
	}

	private void readExtra(int b) {
		if (this.extraLengthBytes < 2) {
			this.extraLength |= b << (8 * this.extraLengthBytes++);
		}
		else {
			this.extraLength--;
		}
		if (this.extraLengthBytes == 2 && this.extraLength == 0) {
			nextHeaderPart(FEXTRA);
		}
	}

	/** Go to the header's next optional part after {@code done} (0: the fixed part), in the RFC's order. */
	private void nextHeaderPart(int done) {
		for (int part : new int[] { FEXTRA, FNAME, FCOMMENT, FHCRC }) {
			if (order(part) > order(done) && (this.flags & part) != 0) {
				this.part = part;
				return;
			}
		}
		this.inHeader = false;
	}

	private static int order(int part) {
		return switch (part) {
			case FEXTRA -> 1;
			case FNAME -> 2;
			case FCOMMENT -> 3;
			case FHCRC -> 4;
			default -> 0;
		};
	}

}
