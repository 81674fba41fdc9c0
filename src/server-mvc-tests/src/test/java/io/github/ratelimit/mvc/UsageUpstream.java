package io.github.ratelimit.mvc;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A real upstream that reports usage, as the APIs the usage limits front do, on a free loopback port (the
 * behaviour of the starter's WebFlux {@code UsageUpstream}, on the JDK's HTTP server):
 * <ul>
 * <li>{@code /v1/chat/completions?used=N}: an OpenAI-style chat completion, {@code usage.total_tokens} N after a long
 * {@code content}; {@code &stream=true}: a {@code text/event-stream} of deltas, then an event with the usage, then
 * {@code [DONE]}, one event every {@code &every=} ms (default 0); {@code &json=bad}: a body that is not JSON;</li>
 * <li>{@code /v1/header?used=N}: the usage in {@code X-Usage-Tokens};</li>
 * <li>{@code /v1/download?size=N}: N bytes;</li>
 * <li>{@code /v1/login?status=S}: an empty answer with status S;</li>
 * <li>anything with {@code &fail=true}: the connection closed before any answer.</li>
 * </ul>
 * Counts the requests it received.
 */
final class UsageUpstream {

	private static UsageUpstream shared;

	private final AtomicInteger received = new AtomicInteger();

	private final HttpServer server;

	static synchronized UsageUpstream shared() {
		if (shared == null) {
			shared = new UsageUpstream();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> shared.server.stop(0)));
		}
		return shared;
	}

	private UsageUpstream() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.setExecutor(Executors.newCachedThreadPool());
		this.server.createContext("/", this::answer);
		this.server.start();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	int received() {
		return this.received.get();
	}

	private void answer(HttpExchange exchange) throws IOException {
		this.received.incrementAndGet();
		byte[] requestBody = exchange.getRequestBody().readAllBytes();
		Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
		if ("true".equals(query.getOrDefault("fail", ""))) {
			exchange.close(); // no response head sent: the connection is closed
			return;
		}
		String path = exchange.getRequestURI().getRawPath();
		long used = Long.parseLong(query.getOrDefault("used", "0"));
		if (path.startsWith("/v1/body")) {
			// the request body's size, to prove it arrived whole
			exchange.getResponseHeaders().add("X-Received-Bytes", Integer.toString(requestBody.length));
			exchange.getResponseHeaders().add("Content-Type", "application/json");
			byte[] answer = ("{\"usage\":{\"total_tokens\":" + used + "}}").getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(200, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
			return;
		}
		if (path.startsWith("/v1/chat")) {
			if ("true".equals(query.getOrDefault("stream", "false"))) {
				stream(exchange, used, Long.parseLong(query.getOrDefault("every", "0")));
				return;
			}
			String body = "bad".equals(query.getOrDefault("json", "")) ? "<html>not json</html>"
					: "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":"
							+ "{\"role\":\"assistant\",\"content\":\"" + "word ".repeat(20_000)
							+ "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":"
							+ (used - 1) + ",\"total_tokens\":" + used + "}}";
			exchange.getResponseHeaders().add("Content-Type", "application/json");
			send(exchange, 200, body.getBytes(StandardCharsets.UTF_8));
			return;
		}
		if (path.startsWith("/v1/header")) {
			exchange.getResponseHeaders().add("X-Usage-Tokens", Long.toString(used));
			send(exchange, 200, "ok".getBytes(StandardCharsets.UTF_8));
			return;
		}
		if (path.startsWith("/v1/download")) {
			exchange.getResponseHeaders().add("Content-Type", "application/octet-stream");
			send(exchange, 200, new byte[Integer.parseInt(query.getOrDefault("size", "0"))]);
			return;
		}
		if (path.startsWith("/v1/login")) {
			exchange.sendResponseHeaders(Integer.parseInt(query.getOrDefault("status", "200")), -1);
			exchange.close();
			return;
		}
		exchange.sendResponseHeaders(404, -1);
		exchange.close();
	}

	private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
		exchange.sendResponseHeaders(status, (body.length > 0) ? body.length : -1);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	private static void stream(HttpExchange exchange, long used, long everyMillis) throws IOException {
		List<String> events = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			events.add("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word " + i + "\"}}]}\n\n");
		}
		events.add("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"total_tokens\":" + used + "}}\n\n");
		events.add("data: [DONE]\n\n");
		exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
		exchange.sendResponseHeaders(200, 0); // chunked
		try (OutputStream out = exchange.getResponseBody()) {
			for (String event : events) {
				if (everyMillis > 0) {
					pace(everyMillis);
				}
				out.write(event.getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
		}
	}

	/** The upstream's pace between two events of a stream (its behaviour, not a test's wait). */
	private static void pace(long millis) throws IOException {
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("interrupted", ex);
		}
	}

	private static Map<String, String> query(String rawQuery) {
		Map<String, String> parameters = new HashMap<>();
		if (rawQuery == null) {
			return parameters;
		}
		for (String parameter : rawQuery.split("&")) {
			int equals = parameter.indexOf('=');
			String name = URLDecoder.decode((equals >= 0) ? parameter.substring(0, equals) : parameter,
					StandardCharsets.UTF_8);
			String value = (equals >= 0) ? URLDecoder.decode(parameter.substring(equals + 1), StandardCharsets.UTF_8)
					: "";
			parameters.putIfAbsent(name, value);
		}
		return parameters;
	}

}
