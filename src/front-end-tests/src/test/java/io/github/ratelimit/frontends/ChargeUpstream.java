package io.github.ratelimit.frontends;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
 * deflate (zlib), as written for any other (what the gateway does with it is the point, not the bytes);
 * {@code encoding=gzip-members} sends it gzip-compressed as two members (RFC 1952 section 2.2), the usage in the
 * second;</li>
 * <li>{@code answer=header&value=V}: the header field {@code X-Usage-Tokens: V} (none without {@code value});</li>
 * <li>{@code answer=stream&value=V}: a {@code text/event-stream} of two events, the last carrying the usage;
 * {@code answer=held-stream}: an event every 50 ms and never the usage, until the gateway stops reading (at most
 * 2 s); {@code answer=released-stream&value=V}: a first event, then a comment line of 1 KB every 10 ms (as a model's
 * stream keeps its connection alive while it works; Gateway Server MVC copies a stream in pieces of 16 KB, so the
 * first event reaches its client once 16 KB have come), and once the test releases it ({@link #release}, by the request's
 * {@code id}; at most 10 s later) an event carrying the usage;</li>
 * <li>{@code answer=bytes&size=N}: N bytes;</li>
 * <li>{@code answer=status&status=S}: that status, no body;</li>
 * <li>{@code answer=none}: the connection closed without an answer;</li>
 * <li>{@code held=true}: the answer comes only once the test releases it ({@link #release}, by the request's
 * {@code id}; at most 10 s later): an upstream slower than its client's patience.</li>
 * </ul>
 * It counts the requests it received, and knows which requests it has received by each request's {@code id}, how many
 * comment lines a {@code released-stream} has sent, and which answers could not be written (the gateway went away).
 */
final class ChargeUpstream {

	private final HttpServer server;

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final AtomicInteger received = new AtomicInteger();

	private final Set<String> seen = ConcurrentHashMap.newKeySet();

	private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> comments = new ConcurrentHashMap<>();

	private final Set<String> abandoned = ConcurrentHashMap.newKeySet();

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
				answer(exchange, hold(id), commentCount(id));
			}
			catch (IOException ex) {
				this.abandoned.add(id); // the gateway went away: the answer is over
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

	/**
	 * The comment lines a {@code released-stream} answer has sent so far.
	 * @param id the request's id
	 * @return a count
	 */
	int comments(String id) {
		return commentCount(id).get();
	}

	/**
	 * Whether the answer to this request could not be written: the gateway closed the connection.
	 * @param id the request's id
	 * @return whether it was abandoned
	 */
	boolean abandoned(String id) {
		return this.abandoned.contains(id);
	}

	private AtomicInteger commentCount(String id) {
		return this.comments.computeIfAbsent(id, (counted) -> new AtomicInteger());
	}

	private CountDownLatch hold(String id) {
		return this.holds.computeIfAbsent(id, (held) -> new CountDownLatch(1));
	}

	void stop() {
		this.server.stop(0);
		this.executor.shutdownNow();
	}

	private static void answer(HttpExchange exchange, CountDownLatch hold, AtomicInteger comments) throws IOException {
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
			case "released-stream" -> {
				exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
				exchange.sendResponseHeaders(200, 0);
				OutputStream out = exchange.getResponseBody();
				out.write("data: {\"choices\":[]}\n\n".getBytes(StandardCharsets.UTF_8));
				out.flush();
				byte[] comment = (": " + "working ".repeat(128) + "\n\n").getBytes(StandardCharsets.UTF_8);
				for (int i = 0; i < 1000 && !released(hold, 10); i++) {
					out.write(comment);
					out.flush();
					comments.incrementAndGet();
				}
				out.write(("data: {\"choices\":[],\"usage\":{\"total_tokens\":" + value + "}}\n\ndata: [DONE]\n\n")
					.getBytes(StandardCharsets.UTF_8));
				out.close();
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
		if (encoding.equals("gzip-members")) {
			exchange.getResponseHeaders().add("Content-Encoding", "gzip");
			int half = body.length / 2;
			ByteArrayOutputStream members = new ByteArrayOutputStream();
			members.write(encode(Arrays.copyOfRange(body, 0, half)));
			members.write(encode(Arrays.copyOfRange(body, half, body.length)));
			return members.toByteArray();
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

	/** One gzip member holding these bytes. */
	private static byte[] encode(byte[] part) throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
			out.write(part);
		}
		return bytes.toByteArray();
	}

	private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
		exchange.sendResponseHeaders(status, (body.length > 0) ? body.length : -1);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	/** Whether the hold is released within this many ms. */
	private static boolean released(CountDownLatch hold, long millis) {
		try {
			return hold.await(millis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return true;
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
