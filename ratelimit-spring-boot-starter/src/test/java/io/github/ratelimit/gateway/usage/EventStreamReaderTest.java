package io.github.ratelimit.gateway.usage;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.ratelimit.gateway.usage.Feeding.eventStream;
import static io.github.ratelimit.gateway.usage.Feeding.readEverySplit;
import static io.github.ratelimit.gateway.usage.Feeding.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class EventStreamReaderTest {

	private static final Supplier<Feeding.Reader> TOTAL_TOKENS = eventStream("usage.total_tokens");

	private static final String OPENAI_STREAM = """
			data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}

			data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}

			data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

			data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":38,"total_tokens":57}}

			data: [DONE]

			""";

	private static UsageReading read(String stream) {
		return readEverySplit(TOTAL_TOKENS, stream);
	}

	@Test
	void readsTheUsageOfAnOpenAiStream() {
		assertThat(read(OPENAI_STREAM)).isEqualTo(UsageReading.found(57));
		assertThat(readEverySplit(eventStream("usage.completion_tokens"), OPENAI_STREAM))
			.isEqualTo(UsageReading.found(38));
	}

	@Test
	void endsLinesWithCrLfCrOrLf() {
		assertThat(read(OPENAI_STREAM.replace("\n", "\r\n"))).isEqualTo(UsageReading.found(57));
		assertThat(read(OPENAI_STREAM.replace("\n", "\r"))).isEqualTo(UsageReading.found(57));
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\r\n\ndata: {\"usage\":{\"total_tokens\":2}}\r\r"
				+ "data: {\"usage\":{\"total_tokens\":3}}\n\r\n")).isEqualTo(UsageReading.found(3));
		// CR LF is one line end, CR CR two: the first stream has no empty line, so no event
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\r\n")).isEqualTo(UsageReading.missing());
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\r\r")).isEqualTo(UsageReading.found(1));
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\n\r")).isEqualTo(UsageReading.found(1));
	}

	@Test
	void joinsTheDataLinesOfAnEventWithLineFeeds() {
		assertThat(read("data: {\"usage\":\ndata: {\"total_tokens\":\r\ndata:7}}\n\n"))
			.isEqualTo(UsageReading.found(7));
		// a line "data" alone is a data line with an empty value
		assertThat(read("data: {\"usage\":{\"total_tokens\":\ndata\ndata: 7}}\n\n")).isEqualTo(UsageReading.found(7));
		// one leading space is removed, the rest kept: a line feed in a string is not JSON
		assertThat(read("data: {\"usage\":{\"total_tokens\":7,\"s\":\"a\ndata: b\"}}\n\n"))
			.isEqualTo(UsageReading.missing());
		assertThat(read("data:  \t{\"usage\":{\"total_tokens\":7}}\n\n")).isEqualTo(UsageReading.found(7));
		// the data is JSON as a body is, which may start with a byte order mark: after the space removed, not before
		assertThat(read("data: \ufeff{\"usage\":{\"total_tokens\":7}}\n\n")).isEqualTo(UsageReading.found(7));
		assertThat(read("data:  \ufeff{\"usage\":{\"total_tokens\":7}}\n\n")).isEqualTo(UsageReading.missing());
	}

	@Test
	void ignoresCommentsAndOtherFields() {
		String stream = """
				: ping
				event: usage
				id: 1
				retry: 1000
				data: {"usage":{"total_tokens":5}}
				:data: {"usage":{"total_tokens":6}}
				Data: {"usage":{"total_tokens":7}}
				dataa: {"usage":{"total_tokens":8}}
				dat: {"usage":{"total_tokens":9}}
				 data: {"usage":{"total_tokens":10}}

				: data: {"usage":{"total_tokens":11}}

				event: data
				id: data:

				""";
		assertThat(read(stream)).isEqualTo(UsageReading.found(5));
	}

	@Test
	void theLastEventWithTheFieldWinsWhateverItsValue() {
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\n\ndata: {\"usage\":{\"total_tokens\":-1}}\n\n"))
			.isEqualTo(UsageReading.negative());
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\n\ndata: {\"usage\":{\"total_tokens\":\"2\"}}\n\n"))
			.isEqualTo(UsageReading.notANumber());
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\n\ndata: {\"usage\":{\"total_tokens\":1e20}}\n\n"))
			.isEqualTo(UsageReading.tooLarge());
		assertThat(read("data: {\"usage\":{\"total_tokens\":-1}}\n\ndata: {\"usage\":{\"total_tokens\":2}}\n\n"))
			.isEqualTo(UsageReading.found(2));
	}

	@Test
	void eventsNotJsonOrWithoutTheFieldLeaveTheReading() {
		String stream = """
				data: {"usage":{"total_tokens":4}}

				data: [DONE]

				data: {"usage":{"total_tokens":5}} trailing

				data: {"usage":{"total_tokens":6}

				data: {"usage":null}

				data: {"choices":[{"usage":{"total_tokens":7}}]}

				data:

				data

				data: {"usage":
				data: {"total_tokens":8}} ,

				""";
		assertThat(read(stream)).isEqualTo(UsageReading.found(4));
	}

	@Test
	void discardsAnEventNotDispatchedWhenTheStreamEnds() {
		assertThat(read("data: {\"usage\":{\"total_tokens\":1}}\n\ndata: {\"usage\":{\"total_tokens\":2}}\n"))
			.isEqualTo(UsageReading.found(1));
		assertThat(read("data: {\"usage\":{\"total_tokens\":2}}")).isEqualTo(UsageReading.missing());
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "\n\n\n", ": only a comment\n\n", "data: [DONE]\n\n",
			"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n", "event: usage\n\n" })
	void isMissingWithoutAnEventCarryingTheField(String stream) {
		assertThat(read(stream)).isEqualTo(UsageReading.missing());
	}

	@Test
	void skipsAByteOrderMarkAtTheStartOfTheStreamOnly() {
		assertThat(read("\ufeffdata: {\"usage\":{\"total_tokens\":3}}\n\n")).isEqualTo(UsageReading.found(3));
		assertThat(read("\n\ufeffdata: {\"usage\":{\"total_tokens\":3}}\n\n")).isEqualTo(UsageReading.missing());
		byte[] partialMark = utf8(
				"..data: {\"usage\":{\"total_tokens\":3}}\n\ndata: {\"usage\":{\"total_tokens\":4}}\n\n");
		partialMark[0] = (byte) 0xEF;
		partialMark[1] = (byte) 0xBB;
		assertThat(readEverySplit(TOTAL_TOKENS, partialMark)).isEqualTo(UsageReading.found(4));
	}

	@Test
	void isPendingUntilAnEventWithTheFieldIsDispatchedAndMissingOnlyOnceEnded() {
		EventStreamReader reader = new EventStreamReader(UsageField.parse("usage.total_tokens"));
		reader.feed(ByteBuffer.wrap(utf8("data: {\"usage\":{\"total_tokens\":9}}\n")));
		assertThat(reader.reading()).isEqualTo(UsageReading.pending());
		reader.feed(ByteBuffer.wrap(utf8("\n")));
		assertThat(reader.reading()).isEqualTo(UsageReading.found(9));
		reader.feed(ByteBuffer.wrap(utf8("data: [DONE]\n\n")));
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.found(9));

		EventStreamReader without = new EventStreamReader(UsageField.parse("usage.total_tokens"));
		without.feed(ByteBuffer.wrap(utf8("data: [DONE]\n\n")));
		assertThat(without.reading()).isEqualTo(UsageReading.pending());
		without.end();
		assertThat(without.reading()).isEqualTo(UsageReading.missing());
		assertThatIllegalStateException().isThrownBy(() -> without.feed(ByteBuffer.allocate(0)));
	}

	@Test
	void skipsAFiveMegabyteEventFedIn64KilobyteChunksWithoutKeepingIt() {
		EventStreamReader reader = new EventStreamReader(UsageField.parse("usage.total_tokens"));
		reader.feed(ByteBuffer.wrap(utf8("data: {\"choices\":[{\"delta\":{\"content\":\"")));
		// one array reused for every chunk: a reader keeping a chunk would see it overwritten
		byte[] chunk = new byte[64 * 1024];
		for (int fed = 0; fed < 5 * 1024 * 1024; fed += chunk.length) {
			Arrays.fill(chunk, (byte) ((fed % 2 == 0) ? 'x' : 'y'));
			reader.feed(ByteBuffer.wrap(chunk).asReadOnlyBuffer());
		}
		reader.feed(ByteBuffer.wrap(utf8("\"}}]}\n\n: keep-alive\n\ndata: {\"usage\":{\"total_tokens\":1310720}}\n\n"
				+ "data: [DONE]\n\n")));
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.found(1310720));
		assertThat(reader.bufferedHighWaterMark()).isEqualTo("1310720".length())
			.isLessThanOrEqualTo(EventStreamReader.MAX_BUFFERED_BYTES);
	}

	@Test
	void keepsNoLine() {
		EventStreamReader reader = new EventStreamReader(UsageField.parse("usage.total_tokens"));
		reader.feed(ByteBuffer.wrap(utf8(": " + "c".repeat(100_000) + "\nx-field" + "f".repeat(100_000) + ": v\n"
				+ "data: {\"n\":" + "1".repeat(100_000) + "}\n\n")));
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.missing());
		assertThat(reader.bufferedHighWaterMark()).isZero();
	}

}
