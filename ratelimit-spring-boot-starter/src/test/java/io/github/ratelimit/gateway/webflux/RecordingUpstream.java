package io.github.ratelimit.gateway.webflux;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A real upstream for route tests: an HTTP server on a free loopback port that answers 200 to everything and
 * records the request target (path and query, exactly as the gateway sent it) of every request it receives.
 */
public final class RecordingUpstream {

	private static RecordingUpstream shared;

	private final List<String> received = new CopyOnWriteArrayList<>();

	private final DisposableServer server;

	/**
	 * The upstream of this test JVM, started on first use and stopped when the JVM exits (Spring's test context
	 * cache may keep a gateway pointing at it across test classes).
	 */
	static synchronized RecordingUpstream shared() {
		if (shared == null) {
			shared = new RecordingUpstream();
			Runtime.getRuntime().addShutdownHook(new Thread(shared.server::disposeNow));
		}
		return shared;
	}

	private RecordingUpstream() {
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> {
				this.received.add(request.uri());
				return response.header("Content-Type", "text/plain").sendString(Mono.just("upstream"));
			})
			.bindNow();
	}

	/** The base URI for a route's {@code uri}. */
	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/** The request targets received so far, in order. */
	public List<String> received() {
		return List.copyOf(this.received);
	}

	void clear() {
		this.received.clear();
	}

}
