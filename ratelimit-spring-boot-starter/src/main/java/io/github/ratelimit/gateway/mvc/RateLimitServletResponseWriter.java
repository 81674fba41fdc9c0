package io.github.ratelimit.gateway.mvc;

import java.io.IOException;

import io.github.ratelimit.gateway.http.RateLimitRefusal;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Writes the answer to every request the Server MVC front end refuses: the {@code rateLimit} filter's 429 (denied,
 * also by the local fallback) and 503 (limiter unavailable on a route that fails closed) and its 400s (no client
 * address, an ambiguous client), and the path check's 400 (path not canonical) and 501 ({@code CONNECT},
 * {@code TRACE}). The WebFlux front end's counterpart is {@code webflux.RateLimitResponseWriter}.
 *
 * <p>One bean of this type writes them all; the default is {@link ProblemDetailServletResponseWriter}
 * ({@code application/problem+json}, RFC 9457, the bodies of the {@code RateLimitProblems} bean). Declare a bean of
 * this type to replace it.
 *
 * <p>When {@link #write} is called, the response is not committed: for a 429 the rate limit header fields of the
 * decision are already set; the status, {@code Retry-After}, {@code Content-Type}, the body and its length are the
 * writer's. A writer must not consume tokens or fail for any request.
 */
@FunctionalInterface
public interface RateLimitServletResponseWriter {

	/**
	 * Write the answer to a refused request.
	 * @param request the request; {@link HttpServletRequest#getRequestURI()} is the path as the limiter saw it
	 * @param response the response, not committed
	 * @param refusal why the request is refused: the status, the violated policies and the limiter's decision
	 * (429), the {@code Retry-After} seconds (429, 503), and an English detail sentence
	 * @throws IOException when the response cannot be written (the client went away)
	 */
	void write(HttpServletRequest request, HttpServletResponse response, RateLimitRefusal refusal) throws IOException;

}
