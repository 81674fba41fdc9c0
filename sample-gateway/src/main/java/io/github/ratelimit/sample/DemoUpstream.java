package io.github.ratelimit.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.beans.factory.DisposableBean;

/**
 * The demo upstream: a Reactor Netty HTTP server on {@code 127.0.0.1} and a free port that answers every request
 * with {@code 200} and a small JSON document naming itself, the method and the path, e.g.
 * {@code {"upstream":"demo","method":"GET","path":"/api/search/x"}}. Paths under {@value #SLOW_PREFIX} are slow
 * reports: answered after {@link #SLOW_ANSWER} (for the concurrency limit of the {@code reports} group).
 */
public final class DemoUpstream implements DisposableBean, AutoCloseable {

	private static final String HOST = "127.0.0.1";

	/** Paths answered slowly. */
	static final String SLOW_PREFIX = "/api/reports/";

	/** How long a slow report takes. */
	static final Duration SLOW_ANSWER = Duration.ofSeconds(2);

	private final DisposableServer server;

	private DemoUpstream(DisposableServer server) {
		this.server = server;
	}

	/**
	 * Start a server on a free port of {@code 127.0.0.1}.
	 * @return the running upstream; {@link #close() close} it when done
	 */
	public static DemoUpstream start() {
		DisposableServer server = HttpServer.create()
			.host(HOST)
			.port(0)
			.handle(DemoUpstream::handle)
			.bindNow(Duration.ofSeconds(10));
		return new DemoUpstream(server);
	}

	/**
	 * The base URI of the server.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	public String uri() {
		return "http://" + HOST + ":" + port();
	}

	/**
	 * The port the server listens on.
	 * @return the port
	 */
	public int port() {
		return this.server.port();
	}

	/** Stop the server and wait (at most a few seconds) until its port is closed. Idempotent. */
	@Override
	public void close() {
		if (!this.server.isDisposed()) {
			this.server.disposeNow(Duration.ofSeconds(5));
		}
	}

	@Override
	public void destroy() {
		close();
	}

	@Override
	public String toString() {
		return "DemoUpstream[" + uri() + "]";
	}

	private static Publisher<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		String path = new QueryStringDecoder(request.uri()).rawPath();
		byte[] body = body(request.method().name(), path);
		Duration delay = path.startsWith(SLOW_PREFIX) ? SLOW_ANSWER : Duration.ZERO;
		// Read (and drop) any request body before answering.
		return request.receive()
			.then()
			.then(Mono.delay(delay).then())
			.then(Mono.defer(() -> response.status(HttpResponseStatus.OK)
				.header(HttpHeaderNames.CONTENT_TYPE, "application/json")
				.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length))
				.sendByteArray(Mono.just(body))
				.then()));
	}

	static byte[] body(String method, String path) {
		StringBuilder json = new StringBuilder(64).append("{\"upstream\":\"demo\",\"method\":");
		appendJsonString(json, method);
		json.append(",\"path\":");
		appendJsonString(json, path);
		return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
	}

	private static void appendJsonString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c < 0x20) {
				json.append(String.format("\\u%04x", (int) c));
			}
			else {
				json.append(c);
			}
		}
		json.append('"');
	}

}
