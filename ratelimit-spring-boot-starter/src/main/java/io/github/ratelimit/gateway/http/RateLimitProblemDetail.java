package io.github.ratelimit.gateway.http;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.jspecify.annotations.Nullable;

import org.springframework.http.ProblemDetail;

/**
 * The {@link ProblemDetail} the {@link RateLimitProblems} make (and the front ends write), serialised the same way by any Jackson
 * {@code JsonMapper}: the RFC 9457 members in the RFC's order ({@code type}, {@code title}, {@code status},
 * {@code detail}, {@code instance}), then the extension members ({@link #setProperty}) in the order they were set,
 * members that are {@code null} left out, whatever the application's Jackson settings for member order and
 * inclusion (settings such as indentation still apply).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({ "type", "title", "status", "detail", "instance" })
public class RateLimitProblemDetail extends ProblemDetail {

	/**
	 * Create a problem with type {@code about:blank} and no other member set.
	 * @param status the HTTP status code (100 to 599)
	 */
	public RateLimitProblemDetail(int status) {
		super(status);
	}

	/**
	 * The extension members, written after the standard ones (flat, not as a {@code properties} object).
	 * @return the members in the order they were set, or {@code null} when none is
	 */
	@Override
	@JsonAnyGetter
	public @Nullable Map<String, Object> getProperties() {
		return super.getProperties();
	}

}
