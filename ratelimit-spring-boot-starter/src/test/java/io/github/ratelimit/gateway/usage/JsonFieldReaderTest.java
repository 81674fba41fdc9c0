package io.github.ratelimit.gateway.usage;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.ratelimit.gateway.usage.Feeding.json;
import static io.github.ratelimit.gateway.usage.Feeding.readEverySplit;
import static io.github.ratelimit.gateway.usage.Feeding.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class JsonFieldReaderTest {

	private static final Supplier<Feeding.Reader> TOTAL_TOKENS = json("usage.total_tokens");

	private static UsageReading read(String body) {
		return readEverySplit(TOTAL_TOKENS, body);
	}

	@Test
	void readsTheNumberAtThePathFromTheRootObject() {
		assertThat(read("{\"usage\":{\"total_tokens\":42}}")).isEqualTo(UsageReading.found(42));
		assertThat(readEverySplit(json("n"), "{\"n\":7}")).isEqualTo(UsageReading.found(7));
	}

	@Test
	void readsAnOpenAiChatCompletion() {
		String body = """
				{
				  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
				  "object": "chat.completion",
				  "created": 1741570283,
				  "model": "gpt-4o-2024-08-06",
				  "choices": [
				    {
				      "index": 0,
				      "message": {
				        "role": "assistant",
				        "content": "The \\"usage\\" is {\\"total_tokens\\": 1} \\u2014 not this one.",
				        "refusal": null,
				        "annotations": []
				      },
				      "logprobs": null,
				      "finish_reason": "stop"
				    }
				  ],
				  "usage": {
				    "prompt_tokens": 1117,
				    "completion_tokens": 46,
				    "total_tokens": 1163,
				    "prompt_tokens_details": { "cached_tokens": 0, "audio_tokens": 0 },
				    "completion_tokens_details": { "reasoning_tokens": 0, "accepted_prediction_tokens": 0 }
				  },
				  "service_tier": "default",
				  "system_fingerprint": "fp_fc9f1d7035"
				}
				""";
		assertThat(read(body)).isEqualTo(UsageReading.found(1163));
		assertThat(readEverySplit(json("usage.completion_tokens_details.reasoning_tokens"), body))
			.isEqualTo(UsageReading.found(0));
	}

	@Test
	void skipsAFiveMegabyteContentFedIn64KilobyteChunksWithoutKeepingIt() {
		byte[] head = utf8("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"");
		byte[] tail = utf8("\"}}],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":5000012}}");
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		reader.feed(ByteBuffer.wrap(head).asReadOnlyBuffer());
		// one array reused for every chunk: a reader keeping a chunk would see it overwritten
		byte[] chunk = new byte[64 * 1024];
		String text = "a\\\"b\\\\c\\u00e9 \u00e9\u20ac\ud83d\ude00 ";
		byte[] pattern = utf8(text);
		int contentLength = 5 * 1024 * 1024;
		for (int fed = 0; fed < contentLength; fed += chunk.length) {
			Arrays.fill(chunk, (byte) 'x');
			for (int i = 0; i + pattern.length <= chunk.length; i += 1024) {
				System.arraycopy(pattern, 0, chunk, i, pattern.length);
			}
			reader.feed(ByteBuffer.wrap(chunk).asReadOnlyBuffer());
			assertThat(reader.reading()).isEqualTo(UsageReading.pending());
		}
		reader.feed(ByteBuffer.wrap(tail).asReadOnlyBuffer());
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.found(5000012));
		assertThat(reader.bufferedHighWaterMark()).isEqualTo("5000012".length())
			.isLessThanOrEqualTo(JsonFieldReader.MAX_BUFFERED_BYTES);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			42                      | 42
			42.0                    | 42
			4.2e1                   | 42
			4.2E+1                  | 42
			4200e-2                 | 42
			41.2                    | 42
			41.000000000000000001   | 42
			0                       | 0
			-0                      | 0
			-0.0e5                  | 0
			0.0001                  | 1
			1e-99999999999999999999 | 1
			0e99999999999999999999  | 0
			9007199254740991.5      | 9007199254740992
			9007199254740992        | 9007199254740992
			""")
	void roundsANumberUpToAWholeNumber(String number, long usage) {
		assertThat(read("{\"usage\":{\"total_tokens\":" + number + "}}")).isEqualTo(UsageReading.found(usage));
	}

	@ParameterizedTest
	@ValueSource(strings = { "9007199254740992.000001", "9007199254740993", "1e16", "1e99999999999999999999",
			"123456789012345678901234567890" })
	void aNumberAboveTwoToThe53rdOnceRoundedUpIsTooLarge(String number) {
		assertThat(read("{\"usage\":{\"total_tokens\":" + number + "}}")).isEqualTo(UsageReading.tooLarge());
	}

	@ParameterizedTest
	@ValueSource(strings = { "-1", "-0.5", "-1e-9", "-1e99999999999999999999", "-9007199254740993" })
	void aNumberBelowZeroIsNegative(String number) {
		assertThat(read("{\"usage\":{\"total_tokens\":" + number + "}}")).isEqualTo(UsageReading.negative());
	}

	@ParameterizedTest
	@ValueSource(strings = { "\"42\"", "\"\"", "true", "false", "null", "{}", "{\"total_tokens\":42}", "[]", "[42]" })
	void anythingButANumberAtThePathIsNotANumber(String value) {
		assertThat(read("{\"usage\":{\"total_tokens\":" + value + "}}")).isEqualTo(UsageReading.notANumber());
	}

	@Test
	void keepsTheTextOfANumberAtThePathUpTo64Characters() {
		String longest = "0." + "0".repeat(61) + "1";
		assertThat(longest).hasSize(JsonFieldReader.MAX_NUMBER_LENGTH);
		assertThat(read("{\"usage\":{\"total_tokens\":" + longest + "}}")).isEqualTo(UsageReading.found(1));
		assertThat(read("{\"usage\":{\"total_tokens\":" + longest + "0}}")).isEqualTo(UsageReading.notANumber());
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		reader.feed(ByteBuffer.wrap(utf8("{\"usage\":{\"total_tokens\":1" + "0".repeat(100_000) + "}}")));
		reader.end();
		// too long to keep, but its whole part alone is far above 2^53
		assertThat(reader.reading()).isEqualTo(UsageReading.tooLarge());
		assertThat(reader.bufferedHighWaterMark()).isEqualTo(JsonFieldReader.MAX_BUFFERED_BYTES);
		assertThat(read("{\"usage\":{\"total_tokens\":-" + "9".repeat(100) + "}}")).isEqualTo(UsageReading.negative());
		// a short whole part with a fraction too long to keep is not read
		assertThat(read("{\"usage\":{\"total_tokens\":12." + "3".repeat(100) + "}}")).isEqualTo(UsageReading.notANumber());
	}

	@Test
	void keepsNothingOfNumbersAndKeysElsewhere() {
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		String longKey = "usage".repeat(20_000);
		reader.feed(ByteBuffer.wrap(utf8("{\"n\":1" + "0".repeat(100_000) + ",\"" + longKey + "\":{\"total_tokens\":1},"
				+ "\"usage\":{\"total_tokens_" + "x".repeat(10_000) + "\":2}}")));
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.missing());
		assertThat(reader.bufferedHighWaterMark()).isZero();
	}

	@Test
	void comparesKeysOnceUnescaped() {
		assertThat(read("{\"\\u0075sage\":{\"total\\u005Ftokens\":42}}")).isEqualTo(UsageReading.found(42));
		assertThat(read("{\"usage\":{\"total_tokens\\u0000\":42}}")).isEqualTo(UsageReading.missing());
		assertThat(readEverySplit(json("a\"b\\c/d\b\f\n\r\t"), "{\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\":3}"))
			.isEqualTo(UsageReading.found(3));
		assertThat(readEverySplit(json("a/b"), "{\"a\\/b\":3}")).isEqualTo(UsageReading.found(3));
	}

	@Test
	void comparesKeysInUnicodeRawOrEscaped() {
		Supplier<Feeding.Reader> field = json("us\u00e4ge.\u20ac.\ud83d\ude00");
		assertThat(readEverySplit(field, "{\"us\u00e4ge\":{\"\u20ac\":{\"\ud83d\ude00\":5}}}"))
			.isEqualTo(UsageReading.found(5));
		assertThat(readEverySplit(field, "{\"us\\u00E4ge\":{\"\\u20ac\":{\"\\ud83d\\ude00\":5}}}"))
			.isEqualTo(UsageReading.found(5));
		assertThat(readEverySplit(field, "{\"usage\":{\"\u20ac\":{\"\ud83d\ude00\":5}}}"))
			.isEqualTo(UsageReading.missing());
		assertThat(readEverySplit(field, "{\"us\u00e4ge\":{\"\u20ac\":{\"\ud83d\ude01\":5}}}"))
			.isEqualTo(UsageReading.missing());
		// a lone surrogate escape is JSON, and no key of the field
		assertThat(readEverySplit(field, "{\"\\ud83d\":1,\"us\u00e4ge\":{\"\u20ac\":{\"\ud83d\ude00\":5}}}"))
			.isEqualTo(UsageReading.found(5));
	}

	@Test
	void aKeyMatchesOnlyWhole() {
		assertThat(read("{\"usage\":{\"total_token\":1,\"total_tokens_x\":2,\"Total_tokens\":3}}"))
			.isEqualTo(UsageReading.missing());
		assertThat(read("{\"usag\":{\"total_tokens\":1},\"usages\":{\"total_tokens\":2}}"))
			.isEqualTo(UsageReading.missing());
	}

	@Test
	void matchesOnlyThePathFromTheRoot() {
		String decoys = "{\"choices\":[{\"usage\":{\"total_tokens\":1}},[{\"usage\":{\"total_tokens\":2}}]],"
				+ "\"data\":{\"usage\":{\"total_tokens\":3}},"
				+ "\"usage\":{\"x\":{\"total_tokens\":4},\"list\":[{\"total_tokens\":5}],\"total_tokens\":6,"
				+ "\"y\":{\"usage\":{\"total_tokens\":7}}},"
				+ "\"after\":[{\"usage\":{\"total_tokens\":8}}],\"total_tokens\":9,\"other\":{\"total_tokens\":10}}";
		assertThat(read(decoys)).isEqualTo(UsageReading.found(6));
		assertThat(read("{\"choices\":[{\"usage\":{\"total_tokens\":1}}],\"total_tokens\":2}"))
			.isEqualTo(UsageReading.missing());
		assertThat(read("{\"usage\":[{\"total_tokens\":1}]}")).isEqualTo(UsageReading.missing());
		assertThat(read("{\"usage\":42}")).isEqualTo(UsageReading.missing());
	}

	@Test
	void theLastOccurrenceOfThePathWins() {
		assertThat(read("{\"usage\":{\"total_tokens\":1,\"total_tokens\":2}}")).isEqualTo(UsageReading.found(2));
		assertThat(read("{\"usage\":{\"total_tokens\":1},\"usage\":{\"total_tokens\":2}}"))
			.isEqualTo(UsageReading.found(2));
		assertThat(read("{\"usage\":{\"total_tokens\":-1},\"usage\":{\"total_tokens\":2}}"))
			.isEqualTo(UsageReading.found(2));
		assertThat(read("{\"usage\":{\"total_tokens\":1},\"usage\":{\"total_tokens\":null}}"))
			.isEqualTo(UsageReading.notANumber());
		assertThat(read("{\"usage\":{\"total_tokens\":1},\"usage\":{}}")).isEqualTo(UsageReading.found(1));
	}

	@Test
	void allowsAByteOrderMarkAtTheStartAndWhitespaceAnywhereBetweenTokens() {
		assertThat(read("\ufeff{\"usage\":{\"total_tokens\":42}}")).isEqualTo(UsageReading.found(42));
		assertThat(read(" \t\r\n{ \t\r\n\"usage\" \t\r\n: \t\r\n{ \"a\" : [ 1 , { } , [ ] ] , \"total_tokens\""
				+ " : 42 \t\r\n} \t\r\n} \t\r\n")).isEqualTo(UsageReading.found(42));
		assertThat(read(" \ufeff{}")).isEqualTo(UsageReading.notJson());
		assertThat(read("\ufeff\ufeff{}")).isEqualTo(UsageReading.notJson());
		assertThat(readEverySplit(json("usage"), new byte[] { (byte) 0xEF, (byte) 0xBB, '{', '}' }))
			.isEqualTo(UsageReading.notJson());
	}

	@Test
	void readsEveryKindOfJsonValueOnTheWay() {
		String body = "{\"a\":[true,false,null,-1.5e-3,0,0.5E+2,\"s\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00aF\",{},[],[[{}]]],"
				+ "\"b\":{\"c\":\"\u00e9\u0800\uffff\ud800\udc00\udbff\udfff\u007f\"},\"usage\":{\"total_tokens\":3}}";
		assertThat(read(body)).isEqualTo(UsageReading.found(3));
	}

	@Test
	void nestsUpTo64Levels() {
		assertThat(read(nested(64))).isEqualTo(UsageReading.missing());
		assertThat(read(nested(65))).isEqualTo(UsageReading.notJson());
		assertThat(read("{\"a\":" + "{\"a\":".repeat(62) + "{}" + "}".repeat(62) + ",\"usage\":{\"total_tokens\":1}}"))
			.isEqualTo(UsageReading.found(1));
	}

	private static String nested(int levels) {
		String open = "{\"a\":[".repeat((levels - 1) / 2) + (((levels - 1) % 2 == 1) ? "{\"a\":" : "");
		String close = (((levels - 1) % 2 == 1) ? "}" : "") + "]}".repeat((levels - 1) / 2);
		return open + "{}" + close;
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "\ufeff", "[]", "[{\"usage\":{\"total_tokens\":1}}]", "42", "\"usage\"", "null",
			"{", "{\"usage\":{\"total_tokens\":42}", "{\"usage\":{\"total_tokens\":42", "{\"usage\":{\"total_tokens\"",
			"{\"usage\":{\"total_tokens\":42}}x", "{\"usage\":{\"total_tokens\":42}}{}", "{}}", "{} {}", "{}\u00a0",
			"{\"a\":1,}", "{,}", "{\"a\":[1,]}", "{\"a\":[1}", "{\"a\":{]}", "{\"a\" 1}", "{\"a\":}", "{a:1}",
			"{'a':1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":+1}", "{\"a\":1e}", "{\"a\":1e+}",
			"{\"a\":0x1}", "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":tru}", "{\"a\":truex}", "{\"a\":True}",
			"{\"a\":nul}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":\"tab\there\"}",
			"{\"a\":\"line\nbreak\"}", "{\"a\":\"unterminated}", "{\"a\":1\f}", "{\"a\":1}\u0000" })
	void anythingMalformedIsNotJson(String body) {
		assertThat(read(body)).isEqualTo(UsageReading.notJson());
	}

	@ParameterizedTest
	@ValueSource(strings = { "C0 80", "C1 BF", "E0 80 80", "E0 9F BF", "ED A0 80", "F0 80 80 80", "F0 8F BF BF",
			"F4 90 80 80", "F5 80 80 80", "FF", "80", "C3", "E2 82", "C3 28", "E2 28 A1", "E2 82 28", "F0 9F 98 28",
			"F0 9F 28 80" })
	void anInvalidUtf8SequenceInAStringIsNotJson(String hex) {
		String[] bytes = hex.split(" ");
		byte[] head = utf8("{\"usage\":{\"total_tokens\":1,\"a\":\"");
		byte[] tail = utf8("\"}}");
		byte[] body = Arrays.copyOf(head, head.length + bytes.length + tail.length);
		for (int i = 0; i < bytes.length; i++) {
			body[head.length + i] = (byte) Integer.parseInt(bytes[i], 16);
		}
		System.arraycopy(tail, 0, body, head.length + bytes.length, tail.length);
		assertThat(readEverySplit(TOTAL_TOKENS, body)).isEqualTo(UsageReading.notJson());
	}

	@Test
	void oncenotJsonIgnoresWhatFollows() {
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		reader.feed(ByteBuffer.wrap(utf8("[")));
		assertThat(reader.reading()).isEqualTo(UsageReading.notJson());
		reader.feed(ByteBuffer.wrap(utf8("{\"usage\":{\"total_tokens\":1}}")));
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.notJson());
	}

	@Test
	void isPendingUntilTheFieldIsReadAndMissingOnlyOnceEnded() {
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		assertThat(reader.reading()).isEqualTo(UsageReading.pending());
		reader.feed(ByteBuffer.wrap(utf8("{\"usage\":{\"total_tokens\":42")));
		assertThat(reader.reading()).as("the number may go on").isEqualTo(UsageReading.pending());
		reader.feed(ByteBuffer.wrap(utf8("}")));
		assertThat(reader.reading()).isEqualTo(UsageReading.found(42));
		reader.feed(ByteBuffer.wrap(utf8(",\"more\":1}")));
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.found(42));

		JsonFieldReader without = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		without.feed(ByteBuffer.wrap(utf8("{\"usage\":{}}")));
		assertThat(without.reading()).isEqualTo(UsageReading.pending());
		without.end();
		assertThat(without.reading()).isEqualTo(UsageReading.missing());
	}

	@Test
	void readsAChunkFromItsPositionToItsLimit() {
		byte[] body = utf8("xx{\"usage\":{\"total_tokens\":42}}yy");
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage.total_tokens"));
		ByteBuffer chunk = ByteBuffer.wrap(body, 2, body.length - 4).asReadOnlyBuffer();
		reader.feed(chunk);
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.found(42));
		assertThat(chunk.position()).isEqualTo(2);
		assertThat(chunk.remaining()).isEqualTo(body.length - 4);
	}

	@Test
	void takesNoChunkOnceEnded() {
		JsonFieldReader reader = new JsonFieldReader(UsageField.parse("usage"));
		reader.feed(ByteBuffer.wrap(utf8("{\"usage\":1}")));
		reader.end();
		reader.end();
		assertThat(reader.reading()).isEqualTo(UsageReading.found(1));
		assertThatIllegalStateException().isThrownBy(() -> reader.feed(ByteBuffer.allocate(0)));
	}

}
