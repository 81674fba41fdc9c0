package io.github.ratelimit.frontends;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A slow upstream whose answers the test holds open: a real HTTP server (the JDK's) on a free port, so that the
 * number of requests in flight to it is what the test decides, not what timing makes it. A request with an
 * {@code id} query parameter is held until the test releases it ({@link #release}, {@link #releaseAll}; at most
 * 60 s, a safety net); one without is answered at once. The answer is {@code status} (default 200) with the body
 * {@code upstream}. It tells which requests it has received, by id.
 */
final class HeldUpstream {

	private static final long MAX_HOLD_SECONDS = 60;

	private final HttpServer server;

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final Map<String, CompletableFuture<Void>> holds = new ConcurrentHashMap<>();

	private final Set<String> arrived = ConcurrentHashMap.newKeySet();

	HeldUpstream() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.setExecutor(this.executor);
		this.server.createContext("/", this::answer);
		this.server.start();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/**
	 * Whether the upstream has received the request with this id (it holds it until released).
	 * @param id the request's id
	 * @return whether it came
	 */
	boolean received(String id) {
		return this.arrived.contains(id);
	}

	/**
	 * Let the answer to a held request go (also before it came: it is then answered at once).
	 * @param id the request's id
	 */
	void release(String id) {
		hold(id).complete(null);
	}

	/** Let every answer held so far go. */
	void releaseAll() {
		this.holds.values().forEach((hold) -> hold.complete(null));
	}

	void stop() {
		releaseAll();
		this.server.stop(0);
		this.executor.shutdownNow();
	}

	private CompletableFuture<Void> hold(String id) {
		return this.holds.computeIfAbsent(id, (held) -> new CompletableFuture<>());
	}

	private void answer(HttpExchange exchange) throws IOException {
		try (exchange) {
			exchange.getRequestBody().readAllBytes();
			String query = exchange.getRequestURI().getRawQuery();
			String id = parameter(query, "id");
			if (id != null) {
				this.arrived.add(id);
				try {
					hold(id).get(MAX_HOLD_SECONDS, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				catch (ExecutionException | TimeoutException ex) {
					// answered all the same
				}
			}
			String status = parameter(query, "status");
			byte[] body = "upstream".getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders((status != null) ? Integer.parseInt(status) : 200, body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		}
		catch (IOException ex) {
			// the gateway went away: nothing to answer
		}
	}

	private static String parameter(String query, String name) {
		if (query == null) {
			return null;
		}
		for (String pair : query.split("&")) {
			if (pair.startsWith(name + "=")) {
				return pair.substring(name.length() + 1);
			}
		}
		return null;
	}

}
