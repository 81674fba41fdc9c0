package io.github.ratelimit.frontends;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * The upstream of both gateways, a real HTTP server (the JDK's) on a free port, whose answer each request's query
 * chooses:
 * <ul>
 * <li>{@code answer=json&value=V}: {@code {"usage":{"total_tokens":V}}} ({@code value} written as given, e.g.
 * {@code -5}, {@code "57"}, {@code 1e30}; without it the field is missing), {@code answer=not-json} an HTML page;
 * {@code encoding=gzip|deflate|br|...} sends the body with that {@code Content-Encoding}, compressed for gzip and
 * deflate (zlib), as written for any other (what the gateway does with it is the point, not the bytes);</li>
 * <li>{@code answer=header&value=V}: the header field {@code X-Usage-Tokens: V} (none without {@code value});</li>
 * <li>{@code answer=stream&value=V}: a {@code text/event-stream} of two events, the last carrying the usage;
 * {@code answer=held-stream}: an event every 50 ms and never the usage, until the gateway stops reading (at most
 * 2 s);</li>
 * <li>{@code answer=bytes&size=N}: N bytes;</li>
 * <li>{@code answer=status&status=S}: that status, no body;</li>
 * <li>{@code answer=none}: the connection closed without an answer;</li>
 * <li>{@code held=true}: the answer comes only once the test releases it ({@link #release}, by the request's
 * {@code id}; at most 10 s later): an upstream slower than its client's patience.</li>
 * </ul>
 * It counts the requests it received, and knows which requests it has received by each request's {@code id}.
 */
final class ChargeUpstream {

	private final HttpServer server;

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final AtomicInteger received = new AtomicInteger();

	private final Set<String> seen = ConcurrentHashMap.newKeySet();

	private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

	ChargeUpstream() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.setExecutor(this.executor);
		this.server.createContext("/", (exchange) -> {
			this.received.incrementAndGet();
			String id = query(exchange.getRequestURI().getRawQuery()).getOrDefault("id", "");
			this.seen.add(id);
			try {
				answer(exchange, hold(id));
			}
			catch (IOException ex) {
				// the gateway went away: the answer is over
			}
			finally {
				exchange.close();
			}
		});
		this.server.start();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	int received() {
		return this.received.get();
	}

	boolean received(String id) {
		return this.seen.contains(id);
	}

	/**
	 * Let the answer to a {@code held=true} request go.
	 * @param id the request's id
	 */
	void release(String id) {
		hold(id).countDown();
	}

	private CountDownLatch hold(String id) {
		return this.holds.computeIfAbsent(id, (held) -> new CountDownLatch(1));
	}

	void stop() {
		this.server.stop(0);
		this.executor.shutdownNow();
	}

	private static void answer(HttpExchange exchange, CountDownLatch hold) throws IOException {
		exchange.getRequestBody().readAllBytes();
		Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
		if (Boolean.parseBoolean(query.get("held"))) {
			try {
				hold.await(10, TimeUnit.SECONDS); // the upstream's own slowness, part of the answer's shape
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		String value = query.get("value");
		switch (query.getOrDefault("answer", "status")) {
			case "json" -> {
				String body = (value != null) ? "{\"usage\":{\"total_tokens\":" + value + "}}" : "{\"usage\":{}}";
				exchange.getResponseHeaders().add("Content-Type", "application/json");
				send(exchange, 200, encode(exchange, body.getBytes(StandardCharsets.UTF_8), query.get("encoding")));
			}
			case "not-json" -> {
				exchange.getResponseHeaders().add("Content-Type", "application/json");
				send(exchange, 200, "<html>not json</html>".getBytes(StandardCharsets.UTF_8));
			}
			case "header" -> {
				if (value != null) {
					exchange.getResponseHeaders().add("X-Usage-Tokens", value);
				}
				send(exchange, 200, "ok".getBytes(StandardCharsets.UTF_8));
			}
			case "stream" -> {
				exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
				exchange.sendResponseHeaders(200, 0);
				OutputStream out = exchange.getResponseBody();
				out.write(("data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"total_tokens\":" + value
						+ "}}\n\ndata: [DONE]\n\n")
					.getBytes(StandardCharsets.UTF_8));
				out.close();
			}
			case "held-stream" -> {
				exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
				exchange.sendResponseHeaders(200, 0);
				OutputStream out = exchange.getResponseBody();
				for (int i = 0; i < 40; i++) { // until a write fails: the gateway closed the connection
					out.write("data: {\"choices\":[]}\n\n".getBytes(StandardCharsets.UTF_8));
					out.flush();
					pause(50);
				}
			}
			case "bytes" -> send(exchange, 200, new byte[Integer.parseInt(query.getOrDefault("size", "0"))]);
			case "none" -> {
				// closed without a response head
			}
			default -> {
				exchange.sendResponseHeaders(Integer.parseInt(query.getOrDefault("status", "200")), -1);
			}
		}
	}

	private static byte[] encode(HttpExchange exchange, byte[] body, String encoding) throws IOException {
		if (encoding == null) {
			return body;
		}
		exchange.getResponseHeaders().add("Content-Encoding", encoding);
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		OutputStream out = switch (encoding) {
			case "gzip" -> new GZIPOutputStream(bytes);
			case "deflate" -> new DeflaterOutputStream(bytes);
			default -> bytes;
		};
		out.write(body);
		out.close();
		return bytes.toByteArray();
	}

	private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
		exchange.sendResponseHeaders(status, (body.length > 0) ? body.length : -1);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	private static void pause(long millis) {
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static Map<String, String> query(String raw) {
		Map<String, String> query = new HashMap<>();
		if (raw != null) {
			for (String pair : raw.split("&")) {
				int equals = pair.indexOf('=');
				query.put(URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8),
						URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8));
			}
		}
		return query;
	}

}
