package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.http.RateLimitRefusal;
import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Writes the answer to every request the limiter refuses: the {@code RateLimit} filter's 429 (denied, also by the
 * local fallback) and 503 (limiter unavailable on a route that fails closed) and its 400s (no client address, an
 * ambiguous client), and the path check's 400 (path not canonical) and 501 ({@code CONNECT}, {@code TRACE}).
 *
 * <p>One bean of this type writes them all; the default is {@link ProblemDetailResponseWriter}
 * ({@code application/problem+json}, RFC 9457). Declare a bean of this type to replace it, e.g. a subclass of
 * {@link ProblemDetailResponseWriter} that adds members or localises {@code detail}, or an implementation of its
 * own for another body or media type.
 *
 * <p>When {@link #write} is called, the response is not committed: for a 429 the filter has already set the rate
 * limit header fields of the decision ({@code RateLimit-Policy} and {@code RateLimit}, or {@code X-RateLimit-*},
 * as {@code ratelimit.header-style} says); the status, {@code Retry-After}, {@code Content-Type}, the body and its
 * length are the writer's. A writer must not consume tokens, block, or fail for any request: an error it returns
 * reaches the client as Spring's error answer (500).
 */
@FunctionalInterface
public interface RateLimitResponseWriter {

	/**
	 * Write the answer to a refused request.
	 * @param exchange the current exchange; {@code exchange.getRequest().getPath()} is the path as the limiter saw
	 * it (the canonical form with {@code ratelimit.non-canonical-paths: normalize}; as sent for a path refused as
	 * not canonical)
	 * @param refusal why the request is refused: the status, the violated policies and the limiter's decision
	 * (429), the {@code Retry-After} seconds (429, 503), and an English detail sentence
	 * @return completion of the write
	 */
	Mono<Void> write(ServerWebExchange exchange, RateLimitRefusal refusal);

}
