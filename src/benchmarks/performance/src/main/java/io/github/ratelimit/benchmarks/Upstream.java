package io.github.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * The upstream of the end-to-end benchmark (step 4): a Reactor Netty HTTP/1.1 server that answers every request
 * with {@code 200} and the same small body ({@value #BODY_TEXT}), keeps connections alive and logs nothing.
 *
 * <p>Both benchmark routes of the sample gateway, with the {@code RateLimit} filter and without it, proxy to this one
 * server, so the filter's cost is measured against a real proxied request. {@code src/benchmarks/run} starts it in a
 * JVM of its own ({@code BenchmarkMain upstream --port N}) with a small heap. It serves from a single event-loop
 * thread by default: on the 2 shared cores of the benchmark machine the gateway, Redis and wrk need the rest.
 */
public final class Upstream implements AutoCloseable {

	/** The body of every answer. */
	public static final String BODY_TEXT = "{\"upstream\":\"bench\"}";

	private static final ByteBuf BODY = Unpooled
		.unreleasableBuffer(Unpooled.wrappedBuffer(BODY_TEXT.getBytes(StandardCharsets.UTF_8)).asReadOnly());

	private static final String BODY_LENGTH = Integer.toString(BODY.readableBytes());

	private final LoopResources loops;

	private final DisposableServer server;

	private Upstream(LoopResources loops, DisposableServer server) {
		this.loops = loops;
		this.server = server;
	}

	/**
	 * Start the server.
	 * @param host the address to listen on, e.g. {@code 127.0.0.1}
	 * @param port the port, {@code 0} for a free one
	 * @param threads event-loop threads serving the connections
	 * @return the running server; {@link #close() close} it when done
	 */
	public static Upstream start(String host, int port, int threads) {
		LoopResources loops = LoopResources.create("upstream", 1, threads, true);
		try {
			DisposableServer server = HttpServer.create()
				.host(host)
				.port(port)
				.runOn(loops)
				.handle((request, response) -> response.status(HttpResponseStatus.OK)
					.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
					.header(HttpHeaderNames.CONTENT_LENGTH, BODY_LENGTH)
					.send(Mono.just(BODY.duplicate())))
				.bindNow(Duration.ofSeconds(10));
			return new Upstream(loops, server);
		}
		catch (RuntimeException ex) {
			loops.dispose();
			throw ex;
		}
	}

	/**
	 * The port the server listens on.
	 * @return the port (the one chosen when started with {@code 0})
	 */
	public int port() {
		return this.server.port();
	}

	/** Stop the server and its event loop. */
	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
		this.loops.disposeLater().block(Duration.ofSeconds(5));
	}

	/**
	 * Serve until the JVM is stopped (SIGTERM from {@code src/benchmarks/run}): {@code --port N} (required),
	 * {@code --host H} (default {@code 127.0.0.1}), {@code --threads T} (default 1).
	 * @param options the command line options
	 * @throws InterruptedException never in practice: the JVM exits on its signal
	 */
	static void serve(java.util.Map<String, String> options) throws InterruptedException {
		String host = options.getOrDefault("host", "127.0.0.1");
		int port = Integer.parseInt(options.get("port"));
		int threads = Integer.parseInt(options.getOrDefault("threads", "1"));
		Upstream upstream = start(host, port, threads);
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			upstream.close();
			stopped.countDown();
		}, "upstream-shutdown"));
		System.err.printf("upstream listening on http://%s:%d (%d event-loop thread(s))%n", host, upstream.port(),
				threads);
		stopped.await();
	}

}
