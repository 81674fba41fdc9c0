package io.github.ratelimit.sample.mvc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.ratelimit.sample.support.AbstractDemoUpstream;

/**
 * The Server MVC sample's demo upstream ({@link AbstractDemoUpstream}) on a JDK {@link HttpServer}, without a Reactor
 * Netty dependency.
 */
public final class DemoUpstream extends AbstractDemoUpstream {

	/** Connections waiting to be accepted, beyond which the kernel refuses new ones. */
	private static final int BACKLOG = 128;

	private final HttpServer server;

	private final ExecutorService executor;

	/** Answers slow reports once {@link #SLOW_ANSWER} has passed; no thread waits for them meanwhile. */
	private final ScheduledExecutorService slowAnswers;

	private final AtomicBoolean closed = new AtomicBoolean();

	private DemoUpstream(HttpServer server, ExecutorService executor, ScheduledExecutorService slowAnswers) {
		this.server = server;
		this.executor = executor;
		this.slowAnswers = slowAnswers;
	}

	/**
	 * Start a server on a free port of {@code 127.0.0.1}. Exchanges run on a pool of threads; a slow report is
	 * answered by a timer after {@link #SLOW_ANSWER}, holding no thread meanwhile.
	 * @return the running upstream; {@link #close() close} it when done
	 * @throws UncheckedIOException if no port can be bound
	 */
	public static DemoUpstream start() {
		AtomicInteger threads = new AtomicInteger();
		ExecutorService executor = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "demo-upstream-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		ScheduledExecutorService slowAnswers = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "demo-upstream-slow-answers");
			thread.setDaemon(true);
			return thread;
		});
		try {
			HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(HOST), 0), BACKLOG);
			server.createContext("/", (exchange) -> handle(exchange, slowAnswers));
			server.setExecutor(executor);
			server.start();
			return new DemoUpstream(server, executor, slowAnswers);
		}
		catch (IOException ex) {
			executor.shutdownNow();
			slowAnswers.shutdownNow();
			throw new UncheckedIOException("The demo upstream could not listen on " + HOST, ex);
		}
	}

	@Override
	public int port() {
		return this.server.getAddress().getPort();
	}

	/**
	 * Stop the server: its port is closed when this returns; exchanges still running (a slow report) are cut off
	 * after at most a second. Idempotent.
	 */
	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.slowAnswers.shutdownNow(); // slow reports not yet answered are cut off with the server
			this.server.stop(0);
			this.executor.shutdown();
			try {
				if (!this.executor.awaitTermination(1, TimeUnit.SECONDS)) {
					this.executor.shutdownNow();
				}
			}
			catch (InterruptedException ex) {
				this.executor.shutdownNow();
				Thread.currentThread().interrupt();
			}
		}
	}

	private static void handle(HttpExchange exchange, ScheduledExecutorService slowAnswers) throws IOException {
		// Read the request body (its first RequestBody.KEPT bytes kept) before answering.
		RequestBody read = RequestBody.EMPTY;
		try (InputStream in = exchange.getRequestBody()) {
			byte[] buffer = new byte[8192];
			for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
				read = read.and(Arrays.copyOf(buffer, n));
			}
		}
		RequestBody body = read;
		if (exchange.getRequestURI().getRawPath().startsWith(SLOW_PREFIX)) {
			try {
				slowAnswers.schedule(() -> answer(exchange, body), SLOW_ANSWER.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (RejectedExecutionException ex) { // the server is stopping
				exchange.close();
			}
			return;
		}
		answer(exchange, body);
	}

	/** Answer an exchange and close it; an answer the client no longer reads is dropped. */
	private static void answer(HttpExchange exchange, RequestBody body) {
		try (exchange) {
			String method = exchange.getRequestMethod();
			Answer answer = answer(method, exchange.getRequestURI().getRawPath(),
					(name) -> exchange.getRequestHeaders().getFirst(name), body);
			exchange.getResponseHeaders().set("Content-Type", answer.contentType());
			if (method.equals("HEAD")) { // the GET answer's header fields, no body
				exchange.getResponseHeaders().set("Content-Length", Integer.toString(answer.length()));
				exchange.sendResponseHeaders(answer.status(), -1);
				return;
			}
			// a streamed answer is chunked (length 0), each piece flushed as it is written
			exchange.sendResponseHeaders(answer.status(), answer.streamed() ? 0 : answer.length());
			try (OutputStream out = exchange.getResponseBody()) {
				for (byte[] chunk : answer.chunks()) {
					out.write(chunk);
					out.flush();
				}
			}
		}
		catch (IOException ex) {
			// the client (the gateway) went away: nothing to answer
		}
	}

}
