package io.github.ratelimit.gateway.webflux;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A real upstream that reports usage, as the APIs the usage limits front do, on a free loopback port:
 * <ul>
 * <li>{@code /v1/chat/completions?used=N}: an OpenAI-style chat completion, {@code usage.total_tokens} N after a long
 * {@code content}; {@code &stream=true}: a {@code text/event-stream} of deltas, then an event with the usage, then
 * {@code [DONE]}, one event every {@code &every=} ms (default 0); {@code &json=bad}: a body that is not JSON;</li>
 * <li>{@code /v1/header?used=N} (also {@code /v1/shadow}, {@code /v1/monthly}): the usage in
 * {@code X-Usage-Tokens}; {@code &delay=} ms before the answer (default 0), {@code &status=} its status (default
 * 200);</li>
 * <li>{@code /v1/body?used=N}: reads the whole request body, answers its size in {@code X-Received-Bytes} and
 * {@code usage.total_tokens} N;</li>
 * <li>{@code /v1/download?size=N}: N bytes;</li>
 * <li>{@code /v1/login?status=S}: an empty answer with status S;</li>
 * <li>anything with {@code &fail=true}: the connection closed before any answer.</li>
 * </ul>
 * Counts the requests it received, and those in flight (received, their answer not yet over).
 */
final class UsageUpstream {

	private static UsageUpstream shared;

	private final AtomicInteger received = new AtomicInteger();

	private final AtomicInteger inFlight = new AtomicInteger();

	private final DisposableServer server;

	static synchronized UsageUpstream shared() {
		if (shared == null) {
			shared = new UsageUpstream();
			Runtime.getRuntime().addShutdownHook(new Thread(shared.server::disposeNow));
		}
		return shared;
	}

	private UsageUpstream() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle(this::answer).bindNow();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	int received() {
		return this.received.get();
	}

	/** Requests received whose answer is not over yet (sent in full, or the connection closed). */
	int inFlight() {
		return this.inFlight.get();
	}

	private Mono<Void> answer(HttpServerRequest request, HttpServerResponse response) {
		this.received.incrementAndGet();
		this.inFlight.incrementAndGet();
		return answering(request, response).doFinally((signal) -> this.inFlight.decrementAndGet());
	}

	private Mono<Void> answering(HttpServerRequest request, HttpServerResponse response) {
		QueryStringDecoder query = new QueryStringDecoder(request.uri());
		if ("true".equals(param(query, "fail", ""))) {
			return request.receive().then(Mono.defer(() -> {
				request.withConnection((connection) -> connection.channel().close());
				return Mono.never();
			}));
		}
		String path = query.path();
		long used = Long.parseLong(param(query, "used", "0"));
		if (path.startsWith("/v1/body")) {
			// the request body's size, to prove it arrived whole
			return request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap((body) -> response
				.header("Content-Type", "application/json")
				.header("X-Received-Bytes", Integer.toString(body.length))
				.sendString(Mono.just("{\"usage\":{\"total_tokens\":" + used + "}}"))
				.then());
		}
		if (path.startsWith("/v1/chat")) {
			if ("true".equals(param(query, "stream", "false"))) {
				return stream(response, used, Long.parseLong(param(query, "every", "0")));
			}
			String body = "bad".equals(param(query, "json", "")) ? "<html>not json</html>"
					: "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":"
							+ "{\"role\":\"assistant\",\"content\":\"" + "word ".repeat(20_000)
							+ "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":"
							+ (used - 1) + ",\"total_tokens\":" + used + "}}";
			return response.header("Content-Type", "application/json").sendString(Mono.just(body)).then();
		}
		if (path.startsWith("/v1/header") || path.startsWith("/v1/shadow") || path.startsWith("/v1/monthly")) {
			long delay = Long.parseLong(param(query, "delay", "0"));
			Mono<String> body = (delay > 0) ? Mono.delay(Duration.ofMillis(delay)).thenReturn("ok") : Mono.just("ok");
			return response.status(Integer.parseInt(param(query, "status", "200")))
				.header("X-Usage-Tokens", Long.toString(used))
				.sendString(body)
				.then();
		}
		if (path.startsWith("/v1/download")) {
			int size = Integer.parseInt(param(query, "size", "0"));
			return response.header("Content-Type", "application/octet-stream")
				.sendByteArray(Mono.just(new byte[size]))
				.then();
		}
		if (path.startsWith("/v1/login")) {
			return response.status(HttpResponseStatus.valueOf(Integer.parseInt(param(query, "status", "200")))).send();
		}
		return response.status(404).send();
	}

	private static Mono<Void> stream(HttpServerResponse response, long used, long everyMillis) {
		Flux<String> events = Flux.concat(Flux.range(0, 5)
			.map((i) -> "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word " + i + "\"}}]}\n\n"),
				Flux.just("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"total_tokens\":" + used + "}}\n\n",
						"data: [DONE]\n\n"));
		if (everyMillis > 0) {
			events = events.delayElements(Duration.ofMillis(everyMillis));
		}
		return response.header("Content-Type", "text/event-stream")
			.sendString(events, StandardCharsets.UTF_8)
			.then();
	}

	private static String param(QueryStringDecoder query, String name, String otherwise) {
		var values = query.parameters().get(name);
		return (values == null || values.isEmpty()) ? otherwise : values.get(0);
	}

}
