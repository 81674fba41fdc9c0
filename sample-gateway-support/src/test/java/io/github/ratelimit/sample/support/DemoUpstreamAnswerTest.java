package io.github.ratelimit.sample.support;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.sample.support.AbstractDemoUpstream.Answer;
import io.github.ratelimit.sample.support.AbstractDemoUpstream.ChatCompletion;
import io.github.ratelimit.sample.support.AbstractDemoUpstream.RequestBody;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The demo upstream's answers ({@link AbstractDemoUpstream#answer}), as both samples' servers send them. */
class DemoUpstreamAnswerTest {

	@Test
	void chatCompletionUsesAQuarterOfTheRequestBytesAndMaxTokensUpTo120() {
		String request = "{\"model\":\"demo\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
		Answer answer = chat(request);

		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.contentType()).isEqualTo("application/json");
		assertThat(answer.streamed()).isFalse();
		long prompt = (request.length() + 3) / 4;
		assertThat(text(answer)).startsWith("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\"")
			.contains("\"finish_reason\":\"length\"")
			.endsWith(",\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":50,\"total_tokens\":"
					+ (prompt + 50) + "}}");
		assertThat(answer.length()).isEqualTo(text(answer).length());

		assertThat(ChatCompletion.of(body("{\"max_tokens\":1000}")).completionTokens()).isEqualTo(120);
		assertThat(ChatCompletion.of(body("{\"max_tokens\":1000}")).limited()).isFalse();
		// no (usable) max_tokens: 256, so 120
		assertThat(ChatCompletion.of(body("{\"max_tokens\":0}")).completionTokens()).isEqualTo(120);
		assertThat(ChatCompletion.of(body("{\"max_tokens\":\"7\"}")).completionTokens()).isEqualTo(120);
		assertThat(ChatCompletion.of(RequestBody.EMPTY)).isEqualTo(new ChatCompletion(1, 120, false, false));
		// only a top-level max_tokens counts
		assertThat(ChatCompletion.of(body("{\"options\":{\"max_tokens\":5},\"max_tokens\":9}")).completionTokens())
			.isEqualTo(9);
		assertThat(ChatCompletion.of(body("{\"options\":{\"max_tokens\":5}}")).completionTokens()).isEqualTo(120);
	}

	@Test
	void streamedChatCompletionEndsWithTheUsageEventAndDone() {
		String request = "{\"stream\":true,\"max_tokens\":10,\"messages\":[]}";
		Answer answer = chat(request);

		assertThat(answer.contentType()).isEqualTo("text/event-stream");
		assertThat(answer.streamed()).isTrue();
		List<String> events = answer.chunks().stream().map((c) -> new String(c, StandardCharsets.UTF_8)).toList();
		assertThat(events).hasSize(5).allMatch((e) -> e.startsWith("data: ") && e.endsWith("\n\n"));
		assertThat(events.get(0)).contains("\"delta\":{\"content\":\"token token token\"}");
		assertThat(events.get(1)).contains("\"delta\":{\"content\":\" token token token\"}");
		assertThat(events.get(2)).contains("\"delta\":{\"content\":\" token token token token\"}");
		assertThat(events.get(2)).contains("\"finish_reason\":\"length\"");
		long prompt = (request.length() + 3) / 4;
		assertThat(events.get(3)).isEqualTo("data: {\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\","
				+ "\"model\":\"demo\",\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt
				+ ",\"completion_tokens\":10,\"total_tokens\":" + (prompt + 10) + "}}\n\n");
		assertThat(events.get(4)).isEqualTo("data: [DONE]\n\n");
	}

	@Test
	void aStreamOfFewerTokensThanThreeHasADeltaEach() {
		Answer answer = chat("{\"stream\":true,\"max_tokens\":2}");

		assertThat(answer.chunks()).hasSize(4);
		assertThat(text(answer)).contains("{\"content\":\"token\"},\"finish_reason\":null")
			.contains("{\"content\":\" token\"},\"finish_reason\":\"length\"");
	}

	@Test
	void promptTokensCountTheWholeBodyBeyondTheBytesKept() {
		String start = "{\"max_tokens\":3,\"pad\":\"";
		RequestBody body = body(start).and(new byte[RequestBody.KEPT]).and(new byte[1000]);

		assertThat(body.length()).isEqualTo(start.length() + RequestBody.KEPT + 1000);
		assertThat(body.kept()).hasSize(RequestBody.KEPT);
		// the kept bytes are no whole JSON object: the defaults
		assertThat(ChatCompletion.of(body))
			.isEqualTo(new ChatCompletion((body.length() + 3) / 4, 120, false, false));
	}

	@Test
	void membersAreTheTopLevelScalarsAsWritten() {
		String json = " { \"a\" : 1 , \"b\":\"x\\\"}\" ,\"c\":[1,{\"d\":2}],\"e\":{\"f\":\"}\"},\"g\":true } ";
		assertThat(body(json).members())
			.isEqualTo(Map.of("a", "1", "b", "\"x\\\"}\"", "g", "true"));
		assertThat(body("{}").members()).isEmpty();
		assertThat(body("{\"a\":1").members()).isEmpty();
		assertThat(body("{\"a\":1} x").members()).isEmpty();
		assertThat(body("[1]").members()).isEmpty();
		assertThat(body("").members()).isEmpty();
	}

	@Test
	void loginSucceedsWithTheDemoPasswordOnly() {
		assertThat(AbstractDemoUpstream.answer("POST", "/auth/login", (name) -> null, RequestBody.EMPTY).status())
			.isEqualTo(401);
		assertThat(AbstractDemoUpstream.answer("POST", "/auth/login", (name) -> "wrong", RequestBody.EMPTY).status())
			.isEqualTo(401);
		Answer ok = AbstractDemoUpstream.answer("POST", "/auth/login",
				(name) -> name.equals("X-Password") ? "demo" : null, RequestBody.EMPTY);
		assertThat(ok.status()).isEqualTo(200);
		assertThat(text(ok)).isEqualTo("{\"upstream\":\"demo\",\"method\":\"POST\",\"path\":\"/auth/login\"}");
		assertThat(AbstractDemoUpstream
			.answer("POST", "/auth/login", (name) -> null, body("{\"user\":\"u\",\"password\":\"demo\"}"))
			.status()).isEqualTo(200);
		assertThat(AbstractDemoUpstream
			.answer("POST", "/auth/login", (name) -> null, body("{\"password\":\"demo!\"}"))
			.status()).isEqualTo(401);
	}

	@Test
	void otherRequestsGetTheEcho() {
		Answer answer = AbstractDemoUpstream.answer("GET", "/v1/chat/completions", (name) -> null, RequestBody.EMPTY);

		assertThat(answer.status()).isEqualTo(200);
		assertThat(text(answer))
			.isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/v1/chat/completions\"}");
	}

	private static Answer chat(String request) {
		return AbstractDemoUpstream.answer("POST", "/v1/chat/completions", (name) -> null, body(request));
	}

	private static RequestBody body(String text) {
		return RequestBody.EMPTY.and(text.getBytes(StandardCharsets.UTF_8));
	}

	private static String text(Answer answer) {
		StringBuilder text = new StringBuilder();
		answer.chunks().forEach((chunk) -> text.append(new String(chunk, StandardCharsets.UTF_8)));
		return text.toString();
	}

}
