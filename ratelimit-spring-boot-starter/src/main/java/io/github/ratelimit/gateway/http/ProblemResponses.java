package io.github.ratelimit.gateway.http;

import java.nio.charset.StandardCharsets;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;

/**
 * Writes {@code application/problem+json} bodies (RFC 9457) for the limiter's refusals, using the problem types
 * registered by draft-ietf-httpapi-ratelimit-headers-10, section 8:
 * {@value #QUOTA_EXCEEDED} (429, with the {@code violated-policies} member) and {@value #TEMPORARY_REDUCED_CAPACITY}
 * (503), plus {@value #GENERIC_PROBLEM} (400, RFC 9457 section 4.2.1: no more specific type) when a request
 * carries no usable client address, an ambiguous client identity, or a path that is not canonical.
 */
public final class ProblemResponses {

	/** Problem type of a denial: the client exceeded one or more quota policies. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Problem type of a refusal because the limiter is unavailable on a critical route. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	/**
	 * Problem type of the 400 answers (no usable client address, an ambiguous client, a path that is not canonical):
	 * {@code about:blank}, the type of a problem with no more meaning than its status code (RFC 9457 section 4.2.1).
	 */
	public static final String GENERIC_PROBLEM = "about:blank";

	/** {@code application/problem+json}. */
	public static final MediaType PROBLEM_JSON = MediaType.APPLICATION_PROBLEM_JSON;

	private ProblemResponses() {
	}

	/**
	 * Answer 429 Too Many Requests with {@code Retry-After} and a quota-exceeded problem body.
	 * @param response the response (headers not yet committed)
	 * @param retryAfterSeconds the {@code Retry-After} value in seconds (at least 1)
	 * @param violatedPolicies names of the violated policies
	 * @param instance the request path, used as the problem instance
	 * @return completion of the write
	 */
	public static Mono<Void> tooManyRequests(ServerHttpResponse response, long retryAfterSeconds,
			List<String> violatedPolicies, String instance) {
		StringBuilder policies = new StringBuilder("[");
		for (String name : violatedPolicies) {
			if (policies.length() > 1) {
				policies.append(',');
			}
			appendJsonString(policies, name);
		}
		policies.append(']');
		String detail = "Quota exceeded for " + String.join(", ", violatedPolicies) + "; retry after "
				+ retryAfterSeconds + " s.";
		return write(response, HttpStatus.TOO_MANY_REQUESTS, retryAfterSeconds, QUOTA_EXCEEDED,
				"Request cannot be satisfied as assigned quota has been exceeded", detail, instance,
				",\"violated-policies\":" + policies);
	}

	/**
	 * Answer 503 Service Unavailable with {@code Retry-After} and a temporary-reduced-capacity problem body.
	 * @param response the response (headers not yet committed)
	 * @param retryAfterSeconds the {@code Retry-After} value in seconds (at least 1)
	 * @param instance the request path
	 * @return completion of the write
	 */
	public static Mono<Void> serviceUnavailable(ServerHttpResponse response, long retryAfterSeconds, String instance) {
		return write(response, HttpStatus.SERVICE_UNAVAILABLE, retryAfterSeconds, TEMPORARY_REDUCED_CAPACITY,
				"Temporarily reduced capacity",
				"The rate limiter is unavailable and this route fails closed; retry later.", instance, "");
	}

	/**
	 * Answer 400 Bad Request when the client cannot be identified.
	 * @param response the response (headers not yet committed)
	 * @param instance the request path
	 * @return completion of the write
	 */
	public static Mono<Void> clientUnidentified(ServerHttpResponse response, String instance) {
		return write(response, HttpStatus.BAD_REQUEST, 0, GENERIC_PROBLEM, "Bad Request",
				"The client address of this request cannot be determined, so it cannot be rate limited.", instance,
				"");
	}

	/**
	 * Answer 400 Bad Request when the request path is not in canonical form ({@link RequestPathCheck}).
	 * @param response the response (headers not yet committed)
	 * @param problem why the path is not canonical, e.g. "it contains an empty segment ('//')"
	 * @param instance the request path as sent
	 * @return completion of the write
	 */
	public static Mono<Void> nonCanonicalPath(ServerHttpResponse response, String problem, String instance) {
		return write(response, HttpStatus.BAD_REQUEST, 0, GENERIC_PROBLEM, "Bad Request",
				"The request path is not in canonical form: " + problem
						+ ". Send the path without empty or dot segments and without encoded separators.",
				instance, "");
	}

	/**
	 * Answer 501 Not Implemented for a method the gateway does not route ({@code CONNECT}, {@code TRACE}).
	 * @param response the response (headers not yet committed)
	 * @param method the method's name
	 * @param instance the request path
	 * @return completion of the write
	 */
	public static Mono<Void> methodNotImplemented(ServerHttpResponse response, String method, String instance) {
		return write(response, HttpStatus.NOT_IMPLEMENTED, 0, GENERIC_PROBLEM, "Not Implemented",
				"The gateway does not route " + method + " requests.", instance, "");
	}

	/**
	 * Answer 400 Bad Request when a request names more than one client, e.g. two API key header lines or a
	 * comma-separated key: the limiter and an upstream could otherwise each take another one.
	 * @param response the response (headers not yet committed)
	 * @param detail what is ambiguous, naming the header but never its values (they are credentials)
	 * @param instance the request path
	 * @return completion of the write
	 */
	public static Mono<Void> ambiguousClient(ServerHttpResponse response, String detail, String instance) {
		return write(response, HttpStatus.BAD_REQUEST, 0, GENERIC_PROBLEM, "Bad Request", detail, instance, "");
	}

	private static Mono<Void> write(ServerHttpResponse response, HttpStatus status, long retryAfterSeconds,
			String type, String title, String detail, String instance, String extension) {
		StringBuilder json = new StringBuilder(256).append("{\"type\":");
		appendJsonString(json, type);
		json.append(",\"title\":");
		appendJsonString(json, title);
		json.append(",\"status\":").append(status.value()).append(",\"detail\":");
		appendJsonString(json, detail);
		json.append(",\"instance\":");
		appendJsonString(json, instance);
		json.append(extension).append('}');
		byte[] bytes = json.toString().getBytes(StandardCharsets.UTF_8);
		response.setStatusCode(status);
		HttpHeaders headers = response.getHeaders();
		headers.setContentType(PROBLEM_JSON);
		headers.setContentLength(bytes.length);
		if (retryAfterSeconds > 0) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
		}
		DataBuffer buffer = response.bufferFactory().wrap(bytes);
		return response.writeWith(Mono.just(buffer));
	}

	/** Append a JSON string (RFC 8259): quotes, backslashes and control characters escaped. */
	static void appendJsonString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
