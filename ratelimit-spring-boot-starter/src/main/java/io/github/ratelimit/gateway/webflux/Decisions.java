package io.github.ratelimit.gateway.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.netty.util.concurrent.EventExecutor;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.netty.Connection;

import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * Where the WebFlux front end adapts the limiter chain's future, once per request.
 */
final class Decisions {

	private Decisions() {
	}

	/**
	 * The decision as a {@code Mono} that emits on the request's event loop: a decision made elsewhere (on the
	 * single I/O thread of the Redis connection, or a timer's pool thread) is handed to the event loop of the
	 * request's connection, so the rest of the request's processing runs there in parallel with other requests;
	 * a decision already made (a remembered denial, an open breaker) is emitted on the calling thread. Cancelling
	 * the {@code Mono} (the client went away) cancels the future, which abandons the check; a decision that arrives
	 * after the cancellation is discarded, and the concurrency slots it holds are released.
	 * @param decision the chain's answer, never completed exceptionally
	 * @param exchange the request
	 * @return the decision
	 */
	static Mono<RateLimitDecision> onRequestThread(CompletableFuture<RateLimitDecision> decision,
			ServerWebExchange exchange) {
		return onRequestThread(decision, eventLoop(exchange));
	}

	/**
	 * {@link #onRequestThread(CompletableFuture, ServerWebExchange)} with the request's executor given.
	 * @param decision the chain's answer
	 * @param loop where a decision made elsewhere is emitted; {@code null} for the thread that made it
	 * @return the decision
	 */
	static Mono<RateLimitDecision> onRequestThread(CompletableFuture<RateLimitDecision> decision, Executor loop) {
		if (decision.isDone() && !decision.isCompletedExceptionally()) {
			return Mono.just(decision.join());
		}
		return Mono.<RateLimitDecision>create((sink) -> {
			sink.onCancel(() -> decision.cancel(false));
			decision.whenComplete((answer, error) -> {
				if (loop == null || (loop instanceof EventExecutor executor && executor.inEventLoop())) {
					emit(sink, answer, error);
					return;
				}
				try {
					loop.execute(() -> emit(sink, answer, error));
				}
				catch (RuntimeException ex) { // e.g. the event loop is shutting down
					emit(sink, answer, error);
				}
			});
		}).doOnDiscard(RateLimitDecision.class, (dropped) -> dropped.slots().abandon());
	}

	private static void emit(MonoSink<RateLimitDecision> sink, RateLimitDecision answer,
			Throwable error) {
		if (error != null) {
			sink.error(error);
		}
		else {
			sink.success(answer);
		}
	}

	/**
	 * The event loop of the request's connection (Reactor Netty); {@code null} on other servers.
	 */
	private static Executor eventLoop(ServerWebExchange exchange) {
		try {
			Object request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
			return (request instanceof Connection connection) ? connection.channel().eventLoop() : null;
		}
		catch (IllegalArgumentException ex) { // a request that wraps no server request
			return null;
		}
	}

}
