package io.github.ratelimit.gateway.http;

import java.net.URI;

import org.jspecify.annotations.Nullable;
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
 * The default {@link RateLimitResponseWriter}: {@code application/problem+json} bodies (RFC 9457) encoded by the
 * application's JSON encoder (the one of its {@link CodecConfigurer}, so Spring Boot's {@code JsonMapper}), with the
 * problem types registered by draft-ietf-httpapi-ratelimit-headers-10, section 8: {@value #QUOTA_EXCEEDED} (429,
 * with the extension member {@value #VIOLATED_POLICIES}: the violated policies' names) and
 * {@value #TEMPORARY_REDUCED_CAPACITY} (503), and {@value #GENERIC_PROBLEM} (400 and 501, RFC 9457 section 4.2.1: no
 * more specific type). {@code instance} is the request path, {@code detail} the refusal's sentence.
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
 * The body is a {@link RateLimitProblemDetail}, whose annotations keep the members in this order whatever the
 * mapper's settings for order and inclusion; the header fields are set in the order shown (the rate limit fields
 * by the filter, before). The body is encoded to one buffer first, so {@code Content-Length} is exact.
 *
 * <p>To shape the answers, subclass and override {@link #problemDetail} (call {@code super}, then add members with
 * {@link ProblemDetail#setProperty} or replace the detail, e.g. from a {@code MessageSource} by
 * {@link RateLimitRefusal#reason()}) or {@link #contentType}, and declare the subclass as a bean; for another body
 * altogether, implement {@link RateLimitResponseWriter}.
 */
public class ProblemDetailResponseWriter implements RateLimitResponseWriter {

	/** Problem type of a denial: the client exceeded one or more quota policies. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Problem type of a refusal because the limiter is unavailable on a critical route. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	/**
	 * Problem type of the 400 and 501 answers (no usable client address, an ambiguous client, a path that is not
	 * canonical, {@code CONNECT}/{@code TRACE}): {@code about:blank}, the type of a problem with no more meaning than
	 * its status code (RFC 9457 section 4.2.1).
	 */
	public static final String GENERIC_PROBLEM = "about:blank";

	/** Extension member of a quota-exceeded problem: the names of the violated policies (a JSON array). */
	public static final String VIOLATED_POLICIES = "violated-policies";

	/** Title of a quota-exceeded problem, as registered by the draft. */
	static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	/** Title of a temporary-reduced-capacity problem, as registered by the draft. */
	static final String TEMPORARY_REDUCED_CAPACITY_TITLE = "Temporarily reduced capacity";

	private static final ResolvableType BODY_TYPE = ResolvableType.forClass(RateLimitProblemDetail.class);

	private static final URI QUOTA_EXCEEDED_TYPE = URI.create(QUOTA_EXCEEDED);

	private static final URI TEMPORARY_REDUCED_CAPACITY_TYPE = URI.create(TEMPORARY_REDUCED_CAPACITY);

	private static final URI GENERIC_PROBLEM_TYPE = URI.create(GENERIC_PROBLEM);

	private final Encoder<Object> encoder;

	/**
	 * Create a writer encoding with the given encoder.
	 * @param encoder a JSON encoder that can encode a {@link RateLimitProblemDetail} as
	 * {@code application/problem+json}, e.g. Spring's {@code JacksonJsonEncoder}
	 * @throws IllegalArgumentException if it cannot
	 */
	@SuppressWarnings("unchecked")
	public ProblemDetailResponseWriter(Encoder<?> encoder) {
		if (!encoder.canEncode(BODY_TYPE, MediaType.APPLICATION_PROBLEM_JSON)) {
			throw new IllegalArgumentException(encoder + " cannot encode a ProblemDetail as application/problem+json");
		}
		this.encoder = (Encoder<Object>) encoder;
	}

	/**
	 * Create a writer encoding with the first encoder of the given codecs that writes a problem as
	 * {@code application/problem+json} (with Spring Boot's codecs: one using its {@code JsonMapper}).
	 * @param codecs the application's codecs, e.g. its {@code ServerCodecConfigurer}
	 * @throws IllegalStateException if no codec writes {@code application/problem+json} (no JSON library such as
	 * Jackson on the class path)
	 */
	public ProblemDetailResponseWriter(CodecConfigurer codecs) {
		this(problemJsonEncoder(codecs));
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
	 * The body of the answer. The default: a {@link RateLimitProblemDetail} with the refusal's status, the problem
	 * type and title of its {@link RateLimitRefusal#reason() reason}, its {@link RateLimitRefusal#detail() detail},
	 * the request path as {@code instance}, and for a denial the {@value #VIOLATED_POLICIES} member.
	 * @param exchange the current exchange
	 * @param refusal why the request is refused
	 * @return the problem; its {@code status} is the answer's status code
	 */
	protected ProblemDetail problemDetail(ServerWebExchange exchange, RateLimitRefusal refusal) {
		RateLimitProblemDetail problem = new RateLimitProblemDetail(refusal.status().value());
		switch (refusal.reason()) {
			case QUOTA_EXCEEDED -> {
				problem.setType(QUOTA_EXCEEDED_TYPE);
				problem.setTitle(QUOTA_EXCEEDED_TITLE);
			}
			case LIMITER_UNAVAILABLE -> {
				problem.setType(TEMPORARY_REDUCED_CAPACITY_TYPE);
				problem.setTitle(TEMPORARY_REDUCED_CAPACITY_TITLE);
			}
			default -> {
				problem.setType(GENERIC_PROBLEM_TYPE);
				problem.setTitle(refusal.status().getReasonPhrase());
			}
		}
		problem.setDetail(refusal.detail());
		problem.setInstance(instance(exchange));
		if (refusal.reason() == RateLimitRefusal.Reason.QUOTA_EXCEEDED) {
			problem.setProperty(VIOLATED_POLICIES, refusal.violatedPolicies());
		}
		return problem;
	}

	/**
	 * The media type of the answer; the encoder must write it.
	 * @param exchange the current exchange
	 * @param refusal why the request is refused
	 * @return {@code application/problem+json}
	 */
	protected MediaType contentType(ServerWebExchange exchange, RateLimitRefusal refusal) {
		return MediaType.APPLICATION_PROBLEM_JSON;
	}

	/**
	 * The request path as a URI reference, or {@code null} (no {@code instance} member) in the one case where it is
	 * not one: never for a request the server parsed, whose path comes from a {@link URI}.
	 */
	private static @Nullable URI instance(ServerWebExchange exchange) {
		try {
			return URI.create(exchange.getRequest().getPath().value());
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

}
