package io.github.ratelimit.gateway.usage;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Feeds a body to a reader in chunks: whole, split at every byte index, and byte by byte, each chunk a read-only
 * view of the whole body whose position must be left where it is.
 */
final class Feeding {

	private Feeding() {
	}

	static Supplier<Reader> json(String field) {
		return () -> {
			JsonFieldReader reader = new JsonFieldReader(UsageField.parse(field));
			return new Reader(reader::feed, reader::end, reader::reading);
		};
	}

	static Supplier<Reader> eventStream(String field) {
		return () -> {
			EventStreamReader reader = new EventStreamReader(UsageField.parse(field));
			return new Reader(reader::feed, reader::end, reader::reading);
		};
	}

	static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * The reading of {@code body}, asserting that it is the same fed whole, in two chunks split at each index, and
	 * byte by byte.
	 */
	static UsageReading readEverySplit(Supplier<Reader> readers, byte[] body) {
		UsageReading whole = read(readers.get(), body, body.length);
		for (int split = 0; split <= body.length; split++) {
			assertThat(read(readers.get(), body, split)).as("split at %d", split).isEqualTo(whole);
		}
		Reader byteByByte = readers.get();
		for (int i = 0; i < body.length; i++) {
			feed(byteByByte, body, i, i + 1);
		}
		byteByByte.end().run();
		assertThat(byteByByte.reading().get()).as("byte by byte").isEqualTo(whole);
		return whole;
	}

	static UsageReading readEverySplit(Supplier<Reader> readers, String body) {
		return readEverySplit(readers, utf8(body));
	}

	private static UsageReading read(Reader reader, byte[] body, int split) {
		feed(reader, body, 0, split);
		feed(reader, body, split, body.length);
		reader.end().run();
		return reader.reading().get();
	}

	static void feed(Reader reader, byte[] body, int from, int to) {
		ByteBuffer chunk = ByteBuffer.wrap(body).asReadOnlyBuffer().position(from).limit(to);
		reader.feed().accept(chunk);
		assertThat(chunk.position()).as("position of the chunk [%d, %d)", from, to).isEqualTo(from);
		assertThat(chunk.limit()).isEqualTo(to);
	}

	record Reader(Consumer<ByteBuffer> feed, Runnable end, Supplier<UsageReading> reading) {

	}

}
