package io.github.ratelimit.gateway.http;

import java.net.URI;

import io.github.ratelimit.gateway.protection.Priority;
import org.jspecify.annotations.Nullable;

import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;

/**
 * The bodies of the limiter's refusals, the same for every front end (WebFlux and Server MVC): RFC 9457 problems
 * with the problem types registered by draft-ietf-httpapi-ratelimit-headers-10, section 8: {@value #QUOTA_EXCEEDED}
 * (429, with the extension member {@value #VIOLATED_POLICIES}: the violated policies' names) and
 * {@value #TEMPORARY_REDUCED_CAPACITY} (503); the starter's own {@value #OVERLOADED} (503, a request shed by an
 * upstream protection, with the extension member {@value #PRIORITY}); and {@value #GENERIC_PROBLEM} (400 and 501, RFC 9457 section 4.2.1: no
 * more specific type). {@code instance} is the request path, {@code detail} the refusal's sentence.
 *
 * <pre>
 * {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as
 * assigned quota has been exceeded","status":429,"detail":"Quota exceeded for free-search; retry after 1 s.",
 * "instance":"/api/search/demo","violated-policies":["free-search"]}
 * </pre>
 *
 * The body is a {@link RateLimitProblemDetail}, whose annotations keep the members in this order whatever the
 * mapper's settings for order and inclusion.
 *
 * <p>To shape the answers of both front ends at once, subclass and override {@link #problemDetail} (call
 * {@code super}, then add members with {@link ProblemDetail#setProperty} or replace the detail, e.g. from a
 * {@code MessageSource} by {@link RateLimitRefusal#reason()}) or {@link #contentType}, and declare the subclass as a
 * bean; the front ends' response writers encode what it returns.
 */
public class RateLimitProblems {

	/** Problem type of a denial: the client exceeded one or more quota policies. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Problem type of a refusal because the limiter is unavailable on a critical route. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	/**
	 * Problem type of a request shed by an upstream protection (503): the upstream is overloaded, the client within
	 * its limits. The starter's own type, documented on the page it names.
	 */
	public static final String OVERLOADED = "https://github.com/ratelimit/ratelimit-spring-boot-starter/blob/main/src/docs/reference/upstream-protection.md#overloaded";

	/** Extension member of an overloaded problem: the priority of the request shed. */
	public static final String PRIORITY = "priority";

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

	private static final URI QUOTA_EXCEEDED_TYPE = URI.create(QUOTA_EXCEEDED);

	private static final URI TEMPORARY_REDUCED_CAPACITY_TYPE = URI.create(TEMPORARY_REDUCED_CAPACITY);

	/** Title of an overloaded problem. */
	static final String OVERLOADED_TITLE = "Upstream overloaded";

	private static final URI OVERLOADED_TYPE = URI.create(OVERLOADED);

	private static final URI GENERIC_PROBLEM_TYPE = URI.create(GENERIC_PROBLEM);

	/**
	 * The body of the answer. The default: a {@link RateLimitProblemDetail} with the refusal's status, the problem
	 * type and title of its {@link RateLimitRefusal#reason() reason}, its {@link RateLimitRefusal#detail() detail},
	 * the request path as {@code instance}, and for a denial the {@value #VIOLATED_POLICIES} member.
	 * @param refusal why the request is refused
	 * @param rawPath the request path as the limiter saw it (percent-encoded, as sent), or {@code null} when unknown
	 * @return the problem; its {@code status} is the answer's status code
	 */
	public ProblemDetail problemDetail(RateLimitRefusal refusal, @Nullable String rawPath) {
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
			case OVERLOADED -> {
				problem.setType(OVERLOADED_TYPE);
				problem.setTitle(OVERLOADED_TITLE);
			}
			default -> {
				problem.setType(GENERIC_PROBLEM_TYPE);
				problem.setTitle(refusal.status().getReasonPhrase());
			}
		}
		problem.setDetail(refusal.detail());
		problem.setInstance(instance(rawPath));
		if (refusal.reason() == RateLimitRefusal.Reason.QUOTA_EXCEEDED) {
			problem.setProperty(VIOLATED_POLICIES, refusal.violatedPolicies());
		}
		Priority priority = refusal.priority();
		if (refusal.reason() == RateLimitRefusal.Reason.OVERLOADED && priority != null) {
			problem.setProperty(PRIORITY, priority.tag());
		}
		return problem;
	}

	/**
	 * The media type of the answer; the front end's encoder must write it.
	 * @param refusal why the request is refused
	 * @return {@code application/problem+json}
	 */
	public MediaType contentType(RateLimitRefusal refusal) {
		return MediaType.APPLICATION_PROBLEM_JSON;
	}

	/**
	 * The request path as a URI reference, or {@code null} (no {@code instance} member) when it is none or unknown:
	 * never for a request the server parsed, whose path comes from a {@link URI}.
	 */
	private static @Nullable URI instance(@Nullable String rawPath) {
		if (rawPath == null) {
			return null;
		}
		try {
			return URI.create(rawPath);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

}
