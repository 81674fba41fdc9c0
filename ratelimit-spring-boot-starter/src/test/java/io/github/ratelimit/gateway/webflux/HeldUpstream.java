package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A real upstream for concurrency tests: an HTTP server on a free loopback port whose requests stay in flight until
 * the test lets them go, counting how many are in flight at once.
 *
 * <ul>
 * <li>{@code /.../hold/...}: answers 200 once {@link #releaseOne()} or {@link #releaseAll()} lets it;</li>
 * <li>{@code /.../stream/...}: sends the status and a first body chunk at once, then holds the rest the same way (so a
 * client can go away in the middle of a response);</li>
 * <li>{@code /.../error/...}: answers 500 at once;</li>
 * <li>anything else: never answers (until released), for gateway timeouts.</li>
 * </ul>
 */
final class HeldUpstream implements AutoCloseable {

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger mostInFlight = new AtomicInteger();

	private final AtomicInteger received = new AtomicInteger();

	private final ConcurrentLinkedQueue<Sinks.Empty<Void>> held = new ConcurrentLinkedQueue<>();

	private final DisposableServer server;

	HeldUpstream() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			this.received.incrementAndGet();
			String uri = request.uri();
			if (uri.contains("/error/")) {
				return response.status(500).sendString(Mono.just("upstream failed"));
			}
			int now = this.inFlight.incrementAndGet();
			this.mostInFlight.accumulateAndGet(now, Math::max);
			Sinks.Empty<Void> gate = Sinks.empty();
			this.held.add(gate);
			Mono<Void> released = gate.asMono().doFinally((signal) -> this.inFlight.decrementAndGet());
			if (uri.contains("/stream/")) {
				return response.status(200)
					.header("Content-Type", "text/plain")
					.chunkedTransfer(true)
					.sendString(Mono.just("first chunk\n").concatWith(released.then(Mono.just("rest\n"))));
			}
			if (uri.contains("/hold/")) {
				return released.then(response.status(200).sendString(Mono.just("upstream")).then());
			}
			return released; // never answers: the gateway times out
		}).bindNow(Duration.ofSeconds(10));
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/** Requests in the upstream now (held ones, whose clients may have gone). */
	int inFlight() {
		return this.inFlight.get();
	}

	/** The most requests that were in the upstream at once. */
	int mostInFlight() {
		return this.mostInFlight.get();
	}

	/** Requests received so far. */
	int received() {
		return this.received.get();
	}

	/**
	 * Let the oldest held request answer.
	 * @return whether one was held
	 */
	boolean releaseOne() {
		Sinks.Empty<Void> gate = this.held.poll();
		if (gate == null) {
			return false;
		}
		gate.tryEmitEmpty();
		return true;
	}

	/** Let every held request answer, and start counting afresh. */
	void releaseAll() {
		while (releaseOne()) {
			// next
		}
	}

	/** Start counting the most in flight afresh (from those in flight now). */
	void resetMost() {
		this.mostInFlight.set(this.inFlight.get());
	}

	@Override
	public void close() {
		releaseAll();
		this.server.disposeNow(Duration.ofSeconds(5));
	}

}
