package io.github.ratelimit.gateway.mvc;

import java.io.IOException;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;

/**
 * The default {@link RateLimitServletResponseWriter}: the {@link RateLimitProblems} body as
 * {@code application/problem+json} (RFC 9457), serialised by the application's {@link JsonMapper} (Spring Boot's),
 * the same bytes and header fields as the WebFlux front end's writer:
 *
 * <pre>
 * HTTP/1.1 429
 * RateLimit-Policy: "free-search";q=5;w=5
 * RateLimit: "free-search";r=0;t=5
 * Retry-After: 1
 * Content-Type: application/problem+json
 * Content-Length: 286
 * </pre>
 *
 * (as Tomcat sends them: it writes {@code Content-Type} and {@code Content-Length} after the other fields)
 *
 * The body is serialised to bytes first, so {@code Content-Length} is exact.
 */
public class ProblemDetailServletResponseWriter implements RateLimitServletResponseWriter {

	private final JsonMapper mapper;

	private final RateLimitProblems problems;

	/**
	 * Create a writer.
	 * @param mapper serialises the problems, e.g. Spring Boot's {@code JsonMapper}
	 * @param problems makes the bodies
	 */
	public ProblemDetailServletResponseWriter(JsonMapper mapper, RateLimitProblems problems) {
		this.mapper = mapper;
		this.problems = problems;
	}

	@Override
	public void write(HttpServletRequest request, HttpServletResponse response, RateLimitRefusal refusal)
			throws IOException {
		ProblemDetail problem = this.problems.problemDetail(refusal, request.getRequestURI());
		byte[] body = this.mapper.writeValueAsBytes(problem);
		response.setStatus(problem.getStatus());
		response.setContentType(this.problems.contentType(refusal).toString());
		response.setContentLength(body.length);
		if (refusal.retryAfterSeconds() > 0) {
			response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(refusal.retryAfterSeconds()));
		}
		response.getOutputStream().write(body);
	}

}
