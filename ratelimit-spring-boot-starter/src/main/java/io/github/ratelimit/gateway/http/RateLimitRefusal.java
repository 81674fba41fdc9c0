package io.github.ratelimit.gateway.http;

import java.util.List;
import java.util.Objects;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.protection.Priority;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * Why the limiter refuses a request, with everything an answer needs: handed to the
 * front end's response writer, which writes the response.
 *
 * @param reason why the request is refused; decides the status code ({@link #status()})
 * @param retryAfterSeconds the {@code Retry-After} value in whole seconds (at least 1) for a
 * {@link Reason#QUOTA_EXCEEDED denial}, a {@link Reason#LIMITER_UNAVAILABLE fail-closed refusal} and a
 * {@link Reason#OVERLOADED shed request}; 0 for the other
 * reasons (no {@code Retry-After})
 * @param violatedPolicies names of the violated quota policies, in the order of the limits (as in the
 * {@code RateLimit-Policy} field) for {@link Reason#QUOTA_EXCEEDED}; empty otherwise
 * @param decision the limiter's decision for {@link Reason#QUOTA_EXCEEDED} and {@link Reason#LIMITER_UNAVAILABLE}
 * (its limits, statuses and where it came from); {@code null} for the refusals made before any check
 * @param detail an English sentence for the client explaining this occurrence (RFC 9457 {@code detail}), never
 * holding a credential: API keys and header values are not quoted
 * @param priority the request's priority for {@link Reason#OVERLOADED}; {@code null} otherwise
 */
public record RateLimitRefusal(Reason reason, long retryAfterSeconds, List<String> violatedPolicies,
		@Nullable RateLimitDecision decision, String detail, @Nullable Priority priority) {

	/**
	 * Create a refusal.
	 * @throws NullPointerException if {@code reason}, {@code violatedPolicies} or {@code detail} is {@code null}
	 * @throws IllegalArgumentException if {@code retryAfterSeconds} is negative
	 */
	public RateLimitRefusal {
		Objects.requireNonNull(reason, "reason");
		Objects.requireNonNull(detail, "detail");
		violatedPolicies = List.copyOf(violatedPolicies);
		if (retryAfterSeconds < 0) {
			throw new IllegalArgumentException("retryAfterSeconds must not be negative, was " + retryAfterSeconds);
		}
	}

	/**
	 * Create a refusal of a reason other than {@link Reason#OVERLOADED}.
	 * @param reason why the request is refused
	 * @param retryAfterSeconds the {@code Retry-After} value in whole seconds, or 0
	 * @param violatedPolicies names of the violated quota policies
	 * @param decision the limiter's decision, or {@code null}
	 * @param detail an English sentence for the client
	 */
	public RateLimitRefusal(Reason reason, long retryAfterSeconds, List<String> violatedPolicies,
			@Nullable RateLimitDecision decision, String detail) {
		this(reason, retryAfterSeconds, violatedPolicies, decision, detail, null);
	}

	/**
	 * The status code of the answer, given by the {@link #reason()}.
	 * @return 429, 503, 400 or 501
	 */
	public HttpStatus status() {
		return this.reason.status();
	}

	/**
	 * A denial: the client exceeded one or more of its limits (429).
	 * @param decision the denying decision (from Redis, the over-limit cache or the local fallback)
	 * @param retryAfterSeconds seconds after which the same request is admitted, at least 1 (see
	 * {@link RateLimitHeaders#retryAfterSeconds(long)})
	 * @return the refusal, with the violated policies and the detail
	 * {@code Quota exceeded for <policies>; retry after <n> s.}, or, when only concurrency limits were violated,
	 * {@code Too many requests in flight for <policies> (at most <q> at once); retry after about <n> s.} (the wait is
	 * an estimate there: a slot frees when a response completes)
	 */
	public static RateLimitRefusal quotaExceeded(RateLimitDecision decision, long retryAfterSeconds) {
		List<LimitStatus> statuses = decision.violated();
		List<String> violated = statuses.stream().map((s) -> s.limit().policyName()).toList();
		boolean inFlightOnly = !statuses.isEmpty() && statuses.stream().allMatch((s) -> s.limit().isConcurrency());
		String detail = inFlightOnly
				? "Too many requests in flight for " + String.join(", ", violated) + " (at most "
						+ statuses.stream().mapToLong((s) -> s.limit().capacity()).min().orElse(0)
						+ " at once); retry after about " + retryAfterSeconds + " s."
				: "Quota exceeded for " + String.join(", ", violated) + "; retry after " + retryAfterSeconds + " s.";
		return new RateLimitRefusal(Reason.QUOTA_EXCEEDED, retryAfterSeconds, violated, decision, detail);
	}

	/**
	 * A refusal because the limiter is unavailable and the route fails closed (503).
	 * @param decision the fail-closed decision
	 * @param retryAfterSeconds seconds until the limiter is tried again (the circuit breaker's wait), at least 1
	 * @return the refusal
	 */
	public static RateLimitRefusal limiterUnavailable(RateLimitDecision decision, long retryAfterSeconds) {
		return new RateLimitRefusal(Reason.LIMITER_UNAVAILABLE, retryAfterSeconds, List.of(), decision,
				"The rate limiter is unavailable and this route fails closed; retry later.");
	}

	/**
	 * A refusal because the upstream is overloaded: an upstream protection shed the request (503). The client is
	 * within its limits, and nothing was taken from them.
	 * @param priority the request's priority
	 * @param retryAfterSeconds seconds to wait before retrying, at least 1 (the protection's {@code retry-after})
	 * @return the refusal
	 */
	public static RateLimitRefusal overloaded(Priority priority, long retryAfterSeconds) {
		return new RateLimitRefusal(Reason.OVERLOADED, retryAfterSeconds, List.of(), null, "The upstream is "
				+ "overloaded and requests of priority " + priority.tag() + " are shed; retry after "
				+ retryAfterSeconds + " s.", priority);
	}

	/**
	 * A refusal because the request carries no usable client address, so it cannot be put into a bucket (400).
	 * @return the refusal
	 */
	public static RateLimitRefusal clientUnidentified() {
		return new RateLimitRefusal(Reason.CLIENT_UNIDENTIFIED, 0, List.of(), null,
				"The client address of this request cannot be determined, so it cannot be rate limited.");
	}

	/**
	 * A refusal because the request names more than one client, e.g. two API key header lines (400).
	 * @param detail what is ambiguous, naming the header but never its values (they are credentials)
	 * @return the refusal
	 */
	public static RateLimitRefusal ambiguousClient(String detail) {
		return new RateLimitRefusal(Reason.AMBIGUOUS_CLIENT, 0, List.of(), null, detail);
	}

	/**
	 * A refusal because the request path is not in canonical form ({@link RequestPathCheck}) (400).
	 * @param problem why, e.g. {@code it contains an empty segment ('//')}
	 * @return the refusal
	 */
	public static RateLimitRefusal nonCanonicalPath(String problem) {
		return new RateLimitRefusal(Reason.NON_CANONICAL_PATH, 0, List.of(), null,
				"The request path is not in canonical form: " + problem
						+ ". Send the path without empty or dot segments and without encoded separators.");
	}

	/**
	 * A refusal of a method the gateway does not route, {@code CONNECT} or {@code TRACE} (501).
	 * @param method the method's name
	 * @return the refusal
	 */
	public static RateLimitRefusal methodNotImplemented(String method) {
		return new RateLimitRefusal(Reason.METHOD_NOT_IMPLEMENTED, 0, List.of(), null,
				"The gateway does not route " + method + " requests.");
	}

	/** Why a request is refused, with the status code of each reason. */
	public enum Reason {

		/** The client exceeded one or more of its limits: 429 Too Many Requests. */
		QUOTA_EXCEEDED(HttpStatus.TOO_MANY_REQUESTS),

		/** The limiter is unavailable and the route fails closed: 503 Service Unavailable. */
		LIMITER_UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE),

		/**
		 * An upstream protection shed the request because the upstream is full: 503 Service Unavailable (the client is
		 * within its limits).
		 */
		OVERLOADED(HttpStatus.SERVICE_UNAVAILABLE),

		/** The request has no usable client address: 400 Bad Request. */
		CLIENT_UNIDENTIFIED(HttpStatus.BAD_REQUEST),

		/** The request names more than one client (API key): 400 Bad Request. */
		AMBIGUOUS_CLIENT(HttpStatus.BAD_REQUEST),

		/** The request path is not in canonical form: 400 Bad Request. */
		NON_CANONICAL_PATH(HttpStatus.BAD_REQUEST),

		/** {@code CONNECT} or {@code TRACE}, which a gateway does not route: 501 Not Implemented. */
		METHOD_NOT_IMPLEMENTED(HttpStatus.NOT_IMPLEMENTED);

		private final HttpStatus status;

		Reason(HttpStatus status) {
			this.status = status;
		}

		/**
		 * The status code of answers for this reason.
		 * @return the status
		 */
		public HttpStatus status() {
			return this.status;
		}

	}

}
