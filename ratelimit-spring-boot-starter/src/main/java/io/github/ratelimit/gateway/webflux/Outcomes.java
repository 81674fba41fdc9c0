package io.github.ratelimit.gateway.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.github.ratelimit.gateway.route.RateLimitOutcome;
import io.netty.util.concurrent.EventExecutor;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * Where the WebFlux front end adapts the handler's future, once per request, and which thread the handler finishes
 * a request on.
 */
final class Outcomes {

	private Outcomes() {
	}

	/**
	 * The outcome as a {@code Mono}: emitted at once when already made, else on the thread that makes it (the
	 * request's event loop, see {@link #requestThread}). Cancelling the {@code Mono} (the client went away) cancels
	 * the future, which abandons the check; an outcome that arrives after the cancellation is discarded, and the
	 * concurrency slots it holds are released.
	 * @param outcome the handler's answer
	 * @return the outcome
	 */
	static Mono<RateLimitOutcome> toMono(CompletableFuture<RateLimitOutcome> outcome) {
		if (outcome.isDone() && !outcome.isCompletedExceptionally()) {
			return Mono.just(outcome.join());
		}
		return Mono.<RateLimitOutcome>create((sink) -> {
			sink.onCancel(() -> outcome.cancel(false));
			outcome.whenComplete((answer, error) -> {
				if (error != null) {
					sink.error(error);
				}
				else {
					sink.success(answer);
				}
			});
		}).doOnDiscard(RateLimitOutcome.class, (dropped) -> dropped.slots().abandon());
	}

	/**
	 * Where the handler makes the outcome of a decision made elsewhere (on the single I/O thread of the Redis
	 * connection, or a timer's pool thread): the event loop of the request's connection, so the rest of the request's
	 * processing runs there in parallel with other requests; at once when already on it, on another server, or when
	 * the event loop refuses the task (shutting down).
	 * @param exchange the request
	 * @return the executor
	 */
	static Executor requestThread(ServerWebExchange exchange) {
		return requestThread(eventLoop(exchange));
	}

	/**
	 * {@link #requestThread(ServerWebExchange)} with the request's event loop given.
	 * @param loop the event loop; {@code null} for the thread that made the decision
	 * @return the executor
	 */
	static Executor requestThread(@Nullable Executor loop) {
		if (loop == null) {
			return Runnable::run;
		}
		return (task) -> {
			if (loop instanceof EventExecutor executor && executor.inEventLoop()) {
				task.run();
				return;
			}
			try {
				loop.execute(task);
			}
			catch (RuntimeException ex) { // e.g. the event loop is shutting down
				task.run();
			}
		};
	}

	/**
	 * The event loop of the request's connection (Reactor Netty); {@code null} on other servers.
	 */
	private static @Nullable Executor eventLoop(ServerWebExchange exchange) {
		try {
			Object request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
			return (request instanceof Connection connection) ? connection.channel().eventLoop() : null;
		}
		catch (IllegalArgumentException ex) { // a request that wraps no server request
			return null;
		}
	}

}
