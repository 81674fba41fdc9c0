package io.github.ratelimit.sample;

import java.time.Duration;

import io.github.ratelimit.sample.support.AbstractDemoUpstream;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/** The WebFlux sample's demo upstream ({@link AbstractDemoUpstream}) on a Reactor Netty HTTP server. */
public final class DemoUpstream extends AbstractDemoUpstream {

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

	@Override
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

	private static Publisher<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		String method = request.method().name();
		String path = new QueryStringDecoder(request.uri()).rawPath();
		Duration delay = path.startsWith(SLOW_PREFIX) ? SLOW_ANSWER : Duration.ZERO;
		// Read the request body (its first RequestBody.KEPT bytes kept) before answering.
		return request.receive()
			.asByteArray()
			.reduce(RequestBody.EMPTY, RequestBody::and)
			.flatMap((body) -> Mono.delay(delay)
				.then(Mono.defer(() -> send(response, answer(method, path, request.requestHeaders()::get, body)))));
	}

	private static Mono<Void> send(HttpServerResponse response, Answer answer) {
		response.status(HttpResponseStatus.valueOf(answer.status()))
			.header(HttpHeaderNames.CONTENT_TYPE, answer.contentType());
		if (!answer.streamed()) { // else chunked, a piece at a time
			response.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(answer.length()));
		}
		return response.sendByteArray(Flux.fromIterable(answer.chunks())).then();
	}

}
