package io.github.ratelimit.gateway.usage;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class InflatingFeedTest {

	private final ByteArrayOutputStream decoded = new ByteArrayOutputStream();

	@Test
	void gzipIsDecodedByteByByteWithTheSourceLeftAlone() throws IOException {
		byte[] body = gzip("{\"usage\":{\"total_tokens\":57}}".getBytes(StandardCharsets.UTF_8));
		InflatingFeed feed = InflatingFeed.of("GZIP", this::collect);
		for (byte b : body) {
			ByteBuffer chunk = ByteBuffer.wrap(new byte[] { b });
			feed.feed(chunk);
			assertThat(chunk.position()).isZero();
		}
		assertThat(feed.failed()).isFalse();
		assertThat(this.decoded.toString(StandardCharsets.UTF_8)).isEqualTo("{\"usage\":{\"total_tokens\":57}}");
	}

	@Test
	void aGzipHeaderWithAnExtraFieldANameAndACommentIsSkipped() throws IOException {
		byte[] deflated = gzip("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		body.write(new byte[] { 0x1f, (byte) 0x8b, 8, 4 | 8 | 16, 0, 0, 0, 0, 0, 3 });
		body.write(new byte[] { 2, 0, 'x', 'y' });
		body.write("name.json\0a comment\0".getBytes(StandardCharsets.US_ASCII));
		body.write(deflated, 10, deflated.length - 10);
		InflatingFeed feed = InflatingFeed.of("x-gzip", this::collect);
		feed.feed(ByteBuffer.wrap(body.toByteArray()));
		assertThat(feed.failed()).isFalse();
		assertThat(this.decoded.toString(StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
	}

	@Test
	void everyMemberOfAGzipBodyIsDecodedInTurn() throws IOException {
		byte[] first = gzip("{\"choices\":[],".getBytes(StandardCharsets.UTF_8));
		byte[] second = gzip("\"usage\":{\"total_tokens\":57}}".getBytes(StandardCharsets.UTF_8));
		byte[] body = new byte[first.length + second.length];
		System.arraycopy(first, 0, body, 0, first.length);
		System.arraycopy(second, 0, body, first.length, second.length);
		String expected = "{\"choices\":[],\"usage\":{\"total_tokens\":57}}";
		InflatingFeed whole = InflatingFeed.of("gzip", this::collect);
		whole.feed(ByteBuffer.wrap(body));
		assertThat(whole.failed()).isFalse();
		assertThat(this.decoded.toString(StandardCharsets.UTF_8)).isEqualTo(expected);
		this.decoded.reset();
		InflatingFeed byteByByte = InflatingFeed.of("gzip", this::collect);
		for (byte b : body) {
			byteByByte.feed(ByteBuffer.wrap(new byte[] { b }));
		}
		assertThat(byteByByte.failed()).isFalse();
		assertThat(this.decoded.toString(StandardCharsets.UTF_8)).isEqualTo(expected);
	}

	@Test
	void bytesAfterTheLastMemberThatStartNoOtherAreNotRead() throws IOException {
		byte[] member = gzip("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
		InflatingFeed feed = InflatingFeed.of("gzip", this::collect);
		feed.feed(ByteBuffer.wrap(member));
		feed.feed(ByteBuffer.wrap("trailing".getBytes(StandardCharsets.US_ASCII)));
		assertThat(feed.failed()).isFalse();
		assertThat(this.decoded.toString(StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
	}

	@Test
	void theBoundHoldsOverAllMembers() throws IOException {
		byte[] member = gzip(new byte[10 * 1024 * 1024]); // two members of 10 MiB each: 20 MiB decoded
		long[] seen = new long[1];
		InflatingFeed feed = InflatingFeed.of("gzip", (piece) -> seen[0] += piece.remaining());
		feed.feed(ByteBuffer.wrap(member));
		assertThat(feed.failed()).isFalse();
		feed.feed(ByteBuffer.wrap(member));
		assertThat(feed.failed()).isTrue();
		assertThat(seen[0]).isLessThanOrEqualTo(InflatingFeed.MAX_DECODED_BYTES);
	}

	@Test
	void deflateIsZlib() throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		try (DeflaterOutputStream out = new DeflaterOutputStream(bytes)) {
			out.write("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
		}
		InflatingFeed feed = InflatingFeed.of("deflate", this::collect);
		feed.feed(ByteBuffer.wrap(bytes.toByteArray()));
		assertThat(this.decoded.toString(StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
	}

	@Test
	void aBodyDecodingToMoreThanTheBoundStopsThere() throws IOException {
		byte[] bomb = gzip(new byte[64 * 1024 * 1024]); // 64 MiB of zeros in about 64 KB
		long[] seen = new long[1];
		InflatingFeed feed = InflatingFeed.of("gzip", (piece) -> seen[0] += piece.remaining());
		feed.feed(ByteBuffer.wrap(bomb));
		assertThat(feed.failed()).isTrue();
		assertThat(seen[0]).isLessThanOrEqualTo(InflatingFeed.MAX_DECODED_BYTES);
		feed.feed(ByteBuffer.wrap(bomb)); // ended: ignored
	}

	@Test
	void dataThatIsNotWhatItsCodingSaysFails() {
		InflatingFeed feed = InflatingFeed.of("gzip", this::collect);
		feed.feed(ByteBuffer.wrap("{\"usage\":1}".getBytes(StandardCharsets.UTF_8)));
		assertThat(feed.failed()).isTrue();
		assertThat(this.decoded.size()).isZero();
	}

	@Test
	void otherCodingsAreNotDecoded() {
		assertThat(InflatingFeed.of("br", this::collect)).isNull();
		assertThat(InflatingFeed.of("zstd", this::collect)).isNull();
		assertThat(InflatingFeed.of("compress", this::collect)).isNull();
	}

	private void collect(ByteBuffer piece) {
		byte[] bytes = new byte[piece.remaining()];
		piece.get(bytes);
		this.decoded.write(bytes, 0, bytes.length);
	}

	private static byte[] gzip(byte[] body) throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
			out.write(body);
		}
		return bytes.toByteArray();
	}

}
