package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A real upstream for concurrency tests: an HTTP server on a free loopback port whose requests are work that goes on
 * until the test lets it end, counting how much work it has in flight at once. A request is in flight from its
 * arrival until the test ends its work ({@link #releaseOne()}, {@link #releaseAll()}), whether or not the gateway is
 * still connected: like a backend that keeps working on a request after the caller hung up or timed out.
 *
 * <ul>
 * <li>{@code /.../hold/...}: answers 200 once its work has ended (if the connection is still open);</li>
 * <li>{@code /.../error/...}: answers 500 at once (not counted as work);</li>
 * <li>anything else: never answers; its work ends when released, for gateway timeouts.</li>
 * </ul>
 */
final class HeldUpstream implements AutoCloseable {

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger mostInFlight = new AtomicInteger();

	private final AtomicInteger received = new AtomicInteger();

	private final ConcurrentLinkedQueue<Work> held = new ConcurrentLinkedQueue<>();

	private final DisposableServer server;

	HeldUpstream() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			this.received.incrementAndGet();
			String uri = request.uri();
			if (uri.contains("/error/")) {
				return response.status(500).sendString(Mono.just("upstream failed"));
			}
			Work work = new Work();
			this.mostInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
			this.held.add(work);
			if (uri.contains("/hold/")) {
				return work.done().then(response.status(200).sendString(Mono.just("upstream")).then());
			}
			return Mono.never(); // no response ever: the gateway times out
		}).bindNow(Duration.ofSeconds(10));
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/** Requests whose work goes on now (arrived and not yet released, whether or not their caller is still there). */
	int inFlight() {
		return this.inFlight.get();
	}

	/** The most requests whose work went on at once (since {@link #resetMost()}). */
	int mostInFlight() {
		return this.mostInFlight.get();
	}

	/** Requests received so far. */
	int received() {
		return this.received.get();
	}

	/**
	 * End the work of the oldest request in flight (it answers, if its connection is still open).
	 * @return whether one was in flight
	 */
	boolean releaseOne() {
		Work work = this.held.poll();
		if (work == null) {
			return false;
		}
		work.end();
		return true;
	}

	/** End the work of every request in flight. */
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

	/** One request's work: in flight from its arrival until the test ends it, independent of its connection. */
	private final class Work {

		private final AtomicBoolean ended = new AtomicBoolean();

		private final Sinks.Empty<Void> done = Sinks.empty();

		Mono<Void> done() {
			return this.done.asMono();
		}

		void end() {
			if (this.ended.compareAndSet(false, true)) {
				HeldUpstream.this.inFlight.decrementAndGet();
				this.done.tryEmitEmpty();
			}
		}

	}

}
