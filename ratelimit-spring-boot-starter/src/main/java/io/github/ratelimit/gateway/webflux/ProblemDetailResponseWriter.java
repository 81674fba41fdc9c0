package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.http.RateLimitProblemDetail;
import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import reactor.core.publisher.Mono;

import org.springframework.core.ResolvableType;
import org.springframework.core.codec.Encoder;
import org.springframework.core.codec.Hints;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.codec.CodecConfigurer;
import org.springframework.http.codec.EncoderHttpMessageWriter;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * The default {@link RateLimitResponseWriter} of the WebFlux front end: the {@link RateLimitProblems} body
 * ({@code application/problem+json}, RFC 9457) encoded by the application's JSON encoder (the one of its
 * {@link CodecConfigurer}, so Spring Boot's {@code JsonMapper}).
 *
 * <pre>
 * HTTP/1.1 429 Too Many Requests
 * RateLimit-Policy: "free-search";q=5;w=5
 * RateLimit: "free-search";r=0;t=5
 * Content-Type: application/problem+json
 * Content-Length: 286
 * Retry-After: 1
 *
 * {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as
 * assigned quota has been exceeded","status":429,"detail":"Quota exceeded for free-search; retry after 1 s.",
 * "instance":"/api/search/demo","violated-policies":["free-search"]}
 * </pre>
 *
 * The header fields are set in the order shown (the rate limit fields by the filter, before). The body is encoded
 * to one buffer first, so {@code Content-Length} is exact.
 *
 * <p>To shape the bodies of both front ends, declare a {@link RateLimitProblems} bean; to shape only this one's,
 * subclass and override {@link #problemDetail} or {@link #contentType}; for another body altogether, implement
 * {@link RateLimitResponseWriter}.
 */
public class ProblemDetailResponseWriter implements RateLimitResponseWriter {

	private static final ResolvableType BODY_TYPE = ResolvableType.forClass(RateLimitProblemDetail.class);

	private final Encoder<Object> encoder;

	private final RateLimitProblems problems;

	/**
	 * Create a writer of the default bodies encoding with the given encoder.
	 * @param encoder a JSON encoder that can encode a {@link RateLimitProblemDetail} as
	 * {@code application/problem+json}, e.g. Spring's {@code JacksonJsonEncoder}
	 * @throws IllegalArgumentException if it cannot
	 */
	public ProblemDetailResponseWriter(Encoder<?> encoder) {
		this(encoder, new RateLimitProblems());
	}

	/**
	 * Create a writer encoding with the given encoder.
	 * @param encoder a JSON encoder that can encode a {@link RateLimitProblemDetail} as
	 * {@code application/problem+json}, e.g. Spring's {@code JacksonJsonEncoder}
	 * @param problems makes the bodies
	 * @throws IllegalArgumentException if the encoder cannot
	 */
	@SuppressWarnings("unchecked")
	public ProblemDetailResponseWriter(Encoder<?> encoder, RateLimitProblems problems) {
		if (!encoder.canEncode(BODY_TYPE, MediaType.APPLICATION_PROBLEM_JSON)) {
			throw new IllegalArgumentException(encoder + " cannot encode a ProblemDetail as application/problem+json");
		}
		this.encoder = (Encoder<Object>) encoder;
		this.problems = problems;
	}

	/**
	 * Create a writer of the default bodies encoding with the first encoder of the given codecs that writes a
	 * problem as {@code application/problem+json} (with Spring Boot's codecs: one using its {@code JsonMapper}).
	 * @param codecs the application's codecs, e.g. its {@code ServerCodecConfigurer}
	 * @throws IllegalStateException if no codec writes {@code application/problem+json} (no JSON library such as
	 * Jackson on the class path)
	 */
	public ProblemDetailResponseWriter(CodecConfigurer codecs) {
		this(codecs, new RateLimitProblems());
	}

	/**
	 * Create a writer encoding with the first encoder of the given codecs that writes a problem as
	 * {@code application/problem+json}.
	 * @param codecs the application's codecs, e.g. its {@code ServerCodecConfigurer}
	 * @param problems makes the bodies
	 * @throws IllegalStateException if no codec writes {@code application/problem+json} (no JSON library such as
	 * Jackson on the class path)
	 */
	public ProblemDetailResponseWriter(CodecConfigurer codecs, RateLimitProblems problems) {
		this(problemJsonEncoder(codecs), problems);
	}

	private static Encoder<?> problemJsonEncoder(CodecConfigurer codecs) {
		for (HttpMessageWriter<?> writer : codecs.getWriters()) {
			if (writer instanceof EncoderHttpMessageWriter<?> encoding
					&& encoding.canWrite(BODY_TYPE, MediaType.APPLICATION_PROBLEM_JSON)) {
				return encoding.getEncoder();
			}
		}
		throw new IllegalStateException("No codec of the application writes application/problem+json, which the rate "
				+ "limiter's answers need: add Jackson (spring-boot-starter-jackson) or declare a bean of type "
				+ RateLimitResponseWriter.class.getName());
	}

	@Override
	public Mono<Void> write(ServerWebExchange exchange, RateLimitRefusal refusal) {
		return Mono.defer(() -> {
			ServerHttpResponse response = exchange.getResponse();
			ProblemDetail problem = problemDetail(exchange, refusal);
			MediaType contentType = contentType(exchange, refusal);
			DataBuffer body = this.encoder.encodeValue(problem, response.bufferFactory(),
					ResolvableType.forInstance(problem), contentType,
					Hints.from(Hints.LOG_PREFIX_HINT, exchange.getLogPrefix()));
			response.setStatusCode(HttpStatusCode.valueOf(problem.getStatus()));
			HttpHeaders headers = response.getHeaders();
			headers.setContentType(contentType);
			headers.setContentLength(body.readableByteCount());
			if (refusal.retryAfterSeconds() > 0) {
				headers.set(HttpHeaders.RETRY_AFTER, Long.toString(refusal.retryAfterSeconds()));
			}
			return response.writeWith(Mono.just(body));
		});
	}

	/**
	 * The body of the answer: the {@link RateLimitProblems}' problem for the refusal and the request path.
	 * @param exchange the current exchange
	 * @param refusal why the request is refused
	 * @return the problem; its {@code status} is the answer's status code
	 */
	protected ProblemDetail problemDetail(ServerWebExchange exchange, RateLimitRefusal refusal) {
		return this.problems.problemDetail(refusal, exchange.getRequest().getPath().value());
	}

	/**
	 * The media type of the answer; the encoder must write it.
	 * @param exchange the current exchange
	 * @param refusal why the request is refused
	 * @return the {@link RateLimitProblems}' media type: {@code application/problem+json} by default
	 */
	protected MediaType contentType(ServerWebExchange exchange, RateLimitRefusal refusal) {
		return this.problems.contentType(refusal);
	}

}
