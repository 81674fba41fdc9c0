package io.github.ratelimit.sample.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * The demo upstream of a sample gateway: an HTTP server on {@value #HOST} and a free port that answers every request
 * with {@code 200} and a small JSON document naming itself, the method and the path ({@link #body(String, String)}),
 * except:
 * <ul>
 * <li>{@code POST} {@value #CHAT_PATH}: an OpenAI-style chat completion reporting the tokens it used
 * ({@link ChatCompletion}), as JSON or, with {@code "stream": true}, as a {@code text/event-stream};</li>
 * <li>{@value #LOGIN_PATH}: {@code 401} unless the request carries the demo password ({@link #loginSucceeds});</li>
 * <li>paths under {@value #SLOW_PREFIX}: slow reports, answered after {@link #SLOW_ANSWER} (for the concurrency
 * limit of the {@code reports} group).</li>
 * </ul>
 * {@link #answer} decides every answer; each sample supplies the server, which reads the request body
 * ({@link RequestBody}) and writes the answer.
 */
public abstract class AbstractDemoUpstream implements DisposableBean, AutoCloseable {

	/** The address the server listens on. */
	protected static final String HOST = "127.0.0.1";

	/** The path of the chat completions. */
	public static final String CHAT_PATH = "/v1/chat/completions";

	/** The path of the login. */
	public static final String LOGIN_PATH = "/auth/login";

	/** The request header that can carry the login's password. */
	public static final String PASSWORD_HEADER = "X-Password";

	/** The password the login accepts. */
	public static final String PASSWORD = "demo";

	/** Paths answered slowly. */
	public static final String SLOW_PREFIX = "/api/reports/";

	/** How long a slow report takes. */
	public static final Duration SLOW_ANSWER = Duration.ofSeconds(2);

	/**
	 * The base URI of the server.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	public String uri() {
		return "http://" + HOST + ":" + port();
	}

	/**
	 * The port the server listens on.
	 * @return the port
	 */
	public abstract int port();

	/** Stop the server; its port is closed when this returns. Idempotent. */
	@Override
	public abstract void close();

	@Override
	public void destroy() {
		close();
	}

	@Override
	public String toString() {
		return "DemoUpstream[" + uri() + "]";
	}

	/**
	 * The answer to a request.
	 * @param method the request method, e.g. {@code POST}
	 * @param path the raw request path, without the query
	 * @param header the request's first value of a header field, looked up by name; {@code null} when absent
	 * @param body the request body, as far as it was read
	 * @return the answer: a chat completion for {@code POST} {@value #CHAT_PATH}; for {@value #LOGIN_PATH}
	 * {@link #body(String, String)} with status {@code 200} if {@link #loginSucceeds}, else {@code 401}; otherwise
	 * {@link #body(String, String)} with status {@code 200}
	 */
	public static Answer answer(String method, String path, Function<String, @Nullable String> header,
			RequestBody body) {
		if (path.equals(CHAT_PATH) && method.equals("POST")) {
			return ChatCompletion.of(body).answer();
		}
		int status = (path.equals(LOGIN_PATH) && !loginSucceeds(header.apply(PASSWORD_HEADER), body)) ? 401 : 200;
		return new Answer(status, "application/json", List.of(body(method, path)), false);
	}

	/**
	 * Whether a login request carries the demo password: the header {@value #PASSWORD_HEADER}, or the member
	 * {@code password} of a JSON object body, is {@value #PASSWORD}.
	 * @param passwordHeader the value of {@value #PASSWORD_HEADER}, or {@code null}
	 * @param body the request body
	 * @return whether the login succeeds
	 */
	public static boolean loginSucceeds(@Nullable String passwordHeader, RequestBody body) {
		return PASSWORD.equals(passwordHeader) || ("\"" + PASSWORD + "\"").equals(body.members().get("password"));
	}

	/**
	 * The echo answer's body.
	 * @param method the request method, e.g. {@code GET}
	 * @param path the raw request path, without the query
	 * @return e.g. {@code {"upstream":"demo","method":"GET","path":"/api/search/x"}} in UTF-8
	 */
	public static byte[] body(String method, String path) {
		StringBuilder json = new StringBuilder(64).append("{\"upstream\":\"demo\",\"method\":");
		appendJsonString(json, method);
		json.append(",\"path\":");
		appendJsonString(json, path);
		return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
	}

	private static void appendJsonString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c < 0x20) {
				json.append(String.format("\\u%04x", (int) c));
			}
			else {
				json.append(c);
			}
		}
		json.append('"');
	}

	/**
	 * An answer of the demo upstream.
	 * @param status the HTTP status code
	 * @param contentType the {@code Content-Type}
	 * @param chunks the body, in the pieces it is written in
	 * @param streamed whether the body is sent as it is written (chunked, each piece flushed) rather than with a
	 * {@code Content-Length}
	 */
	public record Answer(int status, String contentType, List<byte[]> chunks, boolean streamed) {

		/**
		 * The body's length.
		 * @return bytes, the sum of the chunks' lengths
		 */
		public int length() {
			int length = 0;
			for (byte[] chunk : this.chunks) {
				length += chunk.length;
			}
			return length;
		}

	}

	/**
	 * A request body as the server read it: its first {@value #KEPT} bytes and its whole length.
	 * @param kept the first bytes, at most {@value #KEPT}
	 * @param length the body's length in bytes, 0 or more
	 */
	public record RequestBody(byte[] kept, long length) {

		/** Bytes of a body kept; the rest is counted and dropped. */
		public static final int KEPT = 64 * 1024;

		/** No body. */
		public static final RequestBody EMPTY = new RequestBody(new byte[0], 0);

		/**
		 * The body that these bytes extend.
		 * @param more the next bytes of the body
		 * @return a body whose length grew by their length, and which keeps them as far as it has room
		 */
		public RequestBody and(byte[] more) {
			int room = Math.max(0, Math.min(KEPT - this.kept.length, more.length));
			byte[] kept = this.kept;
			if (room > 0) {
				kept = new byte[this.kept.length + room];
				System.arraycopy(this.kept, 0, kept, 0, this.kept.length);
				System.arraycopy(more, 0, kept, this.kept.length, room);
			}
			return new RequestBody(kept, this.length + more.length);
		}

		/**
		 * The members of the body's top-level JSON object whose values are numbers, strings, {@code true},
		 * {@code false} or {@code null}, each as its JSON text (a string with its quotes and escapes).
		 * @return the members by name; empty when the kept bytes are not one whole JSON object
		 */
		public Map<String, String> members() {
			return JsonMembers.of(new String(this.kept, StandardCharsets.UTF_8));
		}

	}

	/**
	 * A chat completion of the demo upstream, derived from the request alone: it uses
	 * {@code prompt_tokens} = the request body's length in bytes / 4 (rounded up, at least 1) and
	 * {@code completion_tokens} = {@code max_tokens} (a whole number of at least 1 at the top level of the JSON
	 * request; otherwise {@value #DEFAULT_MAX_TOKENS}), at most {@value #MOST_COMPLETION_TOKENS}.
	 * @param promptTokens the prompt's tokens, 1 or more
	 * @param completionTokens the completion's tokens, 1 to {@value #MOST_COMPLETION_TOKENS}
	 * @param limited whether {@code max_tokens} cut the completion short ({@code finish_reason} {@code length})
	 * @param stream whether the request asked for a stream ({@code "stream": true})
	 */
	public record ChatCompletion(long promptTokens, long completionTokens, boolean limited, boolean stream) {

		/** The {@code max_tokens} of a request that gives none. */
		public static final int DEFAULT_MAX_TOKENS = 256;

		/** The most tokens a completion uses. */
		public static final int MOST_COMPLETION_TOKENS = 120;

		/**
		 * The completion a request gets.
		 * @param body the request body
		 * @return the completion
		 */
		public static ChatCompletion of(RequestBody body) {
			Map<String, String> members = body.members();
			long maxTokens = DEFAULT_MAX_TOKENS;
			String max = members.get("max_tokens");
			if (max != null && max.matches("[1-9][0-9]{0,17}")) {
				maxTokens = Long.parseLong(max);
			}
			long prompt = Math.max(1, (body.length() + 3) / 4);
			return new ChatCompletion(prompt, Math.min(maxTokens, MOST_COMPLETION_TOKENS),
					maxTokens < MOST_COMPLETION_TOKENS, "true".equals(members.get("stream")));
		}

		/**
		 * The tokens used.
		 * @return {@code promptTokens + completionTokens}
		 */
		public long totalTokens() {
			return this.promptTokens + this.completionTokens;
		}

		/**
		 * The answer: {@code 200} with a {@code chat.completion} JSON object, or for a stream a
		 * {@code text/event-stream} of {@code data:} events: {@code chat.completion.chunk} deltas of the content
		 * (three, or one a token when fewer), then one with {@code "choices":[]} and the {@code usage}, then
		 * {@code [DONE]}.
		 * @return the answer
		 */
		public Answer answer() {
			String usage = "\"usage\":{\"prompt_tokens\":" + this.promptTokens + ",\"completion_tokens\":"
					+ this.completionTokens + ",\"total_tokens\":" + totalTokens() + "}";
			String finish = this.limited ? "length" : "stop";
			if (!this.stream) {
				String json = "{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\",\"model\":\"demo\","
						+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
						+ words(0, this.completionTokens) + "\"},\"finish_reason\":\"" + finish + "\"}]," + usage + "}";
				return new Answer(200, "application/json", List.of(json.getBytes(StandardCharsets.UTF_8)), false);
			}
			String chunk = "{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"model\":\"demo\",";
			List<byte[]> events = new ArrayList<>();
			long from = 0;
			for (int part = 1; part <= 3; part++) {
				long to = this.completionTokens * part / 3;
				if (to > from) {
					String reason = (part == 3) ? "\"" + finish + "\"" : "null";
					events.add(event(chunk + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + words(from, to)
							+ "\"},\"finish_reason\":" + reason + "}]}"));
				}
				from = to;
			}
			events.add(event(chunk + "\"choices\":[]," + usage + "}"));
			events.add(event("[DONE]"));
			return new Answer(200, "text/event-stream", List.copyOf(events), true);
		}

		/** The completion's tokens {@code from} (inclusive) to {@code to}: a word each, spaced as in a stream. */
		private static String words(long from, long to) {
			return ((from == 0) ? "token" : " token") + " token".repeat((int) (to - from - 1));
		}

		private static byte[] event(String data) {
			return ("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8);
		}

	}

	/** The scalar members of a top-level JSON object (see {@link RequestBody#members()}). */
	private static final class JsonMembers {

		private final String text;

		private int at;

		private JsonMembers(String text) {
			this.text = text;
		}

		static Map<String, String> of(String text) {
			Map<String, String> members = new HashMap<>();
			JsonMembers json = new JsonMembers(text);
			try {
				json.expect('{');
				if (json.peek() == '}') {
					json.at++;
				}
				else {
					char next;
					do {
						String name = json.string();
						json.expect(':');
						String value = json.value();
						if (value != null) {
							members.put(name.substring(1, name.length() - 1), value);
						}
						next = json.next();
					}
					while (next == ',');
					if (next != '}') {
						return Map.of();
					}
				}
				return (json.peek() == 0) ? members : Map.of();
			}
			catch (IllegalArgumentException ex) {
				return Map.of();
			}
		}

		/** The next character after white space, consumed. */
		private char next() {
			char c = peek();
			if (c == 0) {
				throw new IllegalArgumentException("end of text");
			}
			this.at++;
			return c;
		}

		/** The next character after white space (skipped), or 0 at the end. */
		private char peek() {
			while (this.at < this.text.length() && Character.isWhitespace(this.text.charAt(this.at))) {
				this.at++;
			}
			return (this.at < this.text.length()) ? this.text.charAt(this.at) : 0;
		}

		private void expect(char c) {
			if (next() != c) {
				throw new IllegalArgumentException("expected " + c);
			}
		}

		/** A string, with its quotes, as written. */
		private String string() {
			expect('"');
			int start = this.at - 1;
			while (this.at < this.text.length()) {
				char c = this.text.charAt(this.at++);
				if (c == '\\') {
					this.at++;
				}
				else if (c == '"') {
					return this.text.substring(start, this.at);
				}
			}
			throw new IllegalArgumentException("unterminated string");
		}

		/** A value: its text if a scalar, {@code null} for an object or array (skipped). */
		private @Nullable String value() {
			char c = peek();
			if (c == '"') {
				return string();
			}
			if (c == '{' || c == '[') {
				int depth = 0;
				do {
					char d = peek();
					if (d == '"') {
						string();
						continue;
					}
					next();
					if (d == '{' || d == '[') {
						depth++;
					}
					else if (d == '}' || d == ']') {
						depth--;
					}
				}
				while (depth > 0);
				return null;
			}
			int start = this.at;
			while (this.at < this.text.length() && ",}] \t\r\n".indexOf(this.text.charAt(this.at)) < 0) {
				this.at++;
			}
			if (this.at == start) {
				throw new IllegalArgumentException("no value");
			}
			return this.text.substring(start, this.at);
		}

	}

}
