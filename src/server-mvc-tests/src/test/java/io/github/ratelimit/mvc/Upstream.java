package io.github.ratelimit.mvc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * A real upstream for the Server MVC gateway's routes: an HTTP server on a free loopback port that answers 200
 * {@code upstream} to everything and records the request target (path and query, as the gateway sent it).
 * Requests whose path has a {@code /hold/} segment are work that goes on until the test lets it end
 * ({@link #answerHeld()}): each is in flight from its arrival until then, whether or not the gateway is still
 * connected (its handler thread waits whatever the connection does), like a backend that keeps working on a request
 * after the caller hung up or timed out; the upstream counts how many it holds at once.
 */
final class Upstream {

	private static Upstream shared;

	private final List<String> received = new CopyOnWriteArrayList<>();

	private final HttpServer server;

	/** Requests with a {@code /hold/} segment wait for a permit of this before they are answered. */
	private final Semaphore held = new Semaphore(0);

	/** Requests with a {@code /hold/} segment received and whose work has not ended yet. */
	private final AtomicInteger holding = new AtomicInteger();

	/** The most requests held at once since the last {@link #clear()}. */
	private final AtomicInteger mostHolding = new AtomicInteger();

	private Upstream() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.setExecutor(Executors.newCachedThreadPool());
		this.server.createContext("/", (exchange) -> {
			this.received.add(exchange.getRequestURI().getRawPath()
					+ ((exchange.getRequestURI().getRawQuery() != null) ? "?" + exchange.getRequestURI().getRawQuery()
							: ""));
			exchange.getRequestBody().readAllBytes();
			if (exchange.getRequestURI().getRawPath().contains("/hold/")) {
				this.mostHolding.accumulateAndGet(this.holding.incrementAndGet(), Math::max);
				this.held.acquireUninterruptibly();
				this.holding.decrementAndGet();
			}
			byte[] body = "upstream".getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().add("Content-Type", "text/plain");
			exchange.sendResponseHeaders(200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		this.server.start();
	}

	/** The upstream of this test JVM, started on first use and stopped when the JVM exits. */
	static synchronized Upstream shared() {
		if (shared == null) {
			shared = new Upstream();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> shared.server.stop(0)));
		}
		return shared;
	}

	/** The base URI for a route's {@code uri}. */
	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/** The request targets received so far, in order. */
	List<String> received() {
		return List.copyOf(this.received);
	}

	/** How many requests with a {@code /hold/} segment are in flight, waiting for {@link #answerHeld()}. */
	int holding() {
		return this.holding.get();
	}

	/** The most requests held at once since the last {@link #clear()}. */
	int mostHolding() {
		return this.mostHolding.get();
	}

	/** Let every held request, and the next ones up to that number, be answered. */
	void answerHeld() {
		this.held.release(Math.max(1, this.holding.get()));
	}

	void clear() {
		this.received.clear();
		this.held.drainPermits();
		this.mostHolding.set(this.holding.get());
	}

}
