package io.github.ratelimit.gateway.http;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.http.HeaderStyle;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * Writes the rate limit header fields of a decision onto a response.
 *
 * <ul>
 * <li>IETF style (draft-ietf-httpapi-ratelimit-headers-10, structured fields per RFC 9651): one list member per
 * limit, {@code RateLimit-Policy: "free-search";q=5;w=5} (q: capacity in tokens, w: seconds an empty bucket takes to
 * fill) and {@code RateLimit: "free-search";r=3;t=2} (r: whole tokens remaining, t: seconds until the bucket is full,
 * rounded up). A concurrency limit is {@code "pro-reports-concurrency";q=3;qu="concurrency"} (q: requests in flight at
 * most, qu: the draft's quota unit for concurrent requests; no window) and {@code "pro-reports-concurrency";r=1}
 * (r: free slots; no reset time, as slots free when responses complete). A limit counting usage carries its unit:
 * {@code "free-chat-tokens";q=100000;w=60;qu="tokens"} (qu: the limit's {@code unit}, as configured; the draft
 * registers {@code content-bytes} for bytes), its {@code r} the whole units remaining as of the request's
 * reservation. A quota is {@code "free-search-month";q=100000;w=2678400} (w: the length of the current period in
 * seconds, on the gateway's clock: 31 days here) and {@code "free-search-month";r=99990;t=1641600} (t: seconds until
 * the period ends and the quota resets).</li>
 * <li>Legacy style: {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} (seconds
 * until full, rounded up) of the most constraining limit (a violated one, else the one with fewest tokens
 * left; a concurrency limit only when it alone is violated or there is no rate limit, and then without
 * {@code X-RateLimit-Reset}).</li>
 * </ul>
 * {@code Retry-After} is written by the caller on denials, see {@link #retryAfterSeconds(long)}.
 */
public final class RateLimitHeaders {

	/** {@code RateLimit-Policy} field name. */
	public static final String RATELIMIT_POLICY = "RateLimit-Policy";

	/** {@code RateLimit} field name. */
	public static final String RATELIMIT = "RateLimit";

	/** Legacy {@code X-RateLimit-Limit} field name. */
	public static final String X_RATELIMIT_LIMIT = "X-RateLimit-Limit";

	/** Legacy {@code X-RateLimit-Remaining} field name. */
	public static final String X_RATELIMIT_REMAINING = "X-RateLimit-Remaining";

	/** Legacy {@code X-RateLimit-Reset} field name. */
	public static final String X_RATELIMIT_RESET = "X-RateLimit-Reset";

	private final HeaderStyle style;

	/**
	 * The {@code RateLimit-Policy} value depends only on the limits (and a quota's period): built once per set of
	 * limits, and again when a quota's period has changed.
	 */
	private final Map<PlanLimits, Policy> policies = new ConcurrentHashMap<>();

	/** The policy value written last (most gateways serve one or two sets of limits over and over). */
	private volatile @Nullable Policy lastPolicy;

	/**
	 * Create a writer.
	 * @param style which fields to write
	 */
	public RateLimitHeaders(HeaderStyle style) {
		this.style = style;
	}

	/**
	 * Write the fields of a decision of the shared store (or a denial of it remembered until its Retry-After, or tokens
	 * of a lease taken from it);
	 * nothing is written for a local fallback decision (it
	 * reflects one instance's share, not the client's quota) nor for an undecided one.
	 * @param decision the decision
	 * @param headers the response headers
	 */
	public void write(RateLimitDecision decision, HttpHeaders headers) {
		RateLimitDecision.Source source = decision.source();
		if ((source != RateLimitDecision.Source.SHARED && source != RateLimitDecision.Source.CACHED
				&& source != RateLimitDecision.Source.LEASED) || this.style == HeaderStyle.NONE) {
			return;
		}
		List<LimitStatus> statuses = decision.statuses();
		if (this.style == HeaderStyle.IETF || this.style == HeaderStyle.BOTH) {
			headers.set(RATELIMIT_POLICY, policyField(decision.limits(), statuses));
			headers.set(RATELIMIT, rateLimitField(statuses));
		}
		if (this.style == HeaderStyle.LEGACY || this.style == HeaderStyle.BOTH) {
			LimitStatus tightest = mostConstraining(statuses);
			headers.set(X_RATELIMIT_LIMIT, Long.toString(tightest.limit().capacity()));
			headers.set(X_RATELIMIT_REMAINING, Long.toString(tightest.remaining()));
			if (!tightest.limit().isConcurrency()) { // nothing resets a concurrency limit by time
				headers.set(X_RATELIMIT_RESET, Long.toString(ceilSeconds(tightest.resetMillis())));
			}
		}
	}

	/**
	 * The {@code Retry-After} value (RFC 9110, section 10.2.3) for a wait: whole seconds, rounded up, at least 1,
	 * so a client that waits exactly that long is allowed.
	 * @param retryAfterMillis the wait in milliseconds
	 * @return seconds, at least 1
	 */
	public static long retryAfterSeconds(long retryAfterMillis) {
		return Math.max(1, ceilSeconds(retryAfterMillis));
	}

	private String policyField(PlanLimits limits, List<LimitStatus> statuses) {
		if (statuses.size() != limits.limits().size()) {
			return policyField(statuses); // statuses of a subset: not the cached value
		}
		// a list with quotas: its w holds while the quotas stay in their periods
		Instant now = limits.hasQuotas() ? Instant.now() : Instant.EPOCH;
		Policy last = this.lastPolicy;
		if (last != null && last.limits == limits && last.periods.contains(now)) {
			return last.value;
		}
		Policy policy = this.policies.get(limits);
		if (policy == null || !policy.periods.contains(now)) {
			policy = new Policy(limits, policyField(statuses, now), limits.quotaPeriodsAt(now));
			this.policies.put(limits, policy);
		}
		this.lastPolicy = policy;
		return policy.value;
	}

	/** A {@code RateLimit-Policy} value and the gateway times it holds for (its quotas' current periods). */
	private record Policy(PlanLimits limits, String value, QuotaPeriod.Interval periods) {
	}

	static String policyField(List<LimitStatus> statuses) {
		return policyField(statuses, Instant.now());
	}

	static String policyField(List<LimitStatus> statuses, Instant now) {
		StringBuilder field = new StringBuilder();
		for (LimitStatus status : statuses) {
			LimitDefinition limit = status.limit();
			if (field.length() > 0) {
				field.append(", ");
			}
			appendString(field, limit.policyName());
			field.append(";q=").append(limit.capacity());
			if (limit.isConcurrency()) {
				field.append(";qu=\"concurrency\"");
			}
			else {
				field.append(";w=").append(limit.windowSeconds(now));
				if (limit.isUsage()) {
					field.append(";qu=");
					appendString(field, limit.unit());
				}
			}
		}
		return field.toString();
	}

	static String rateLimitField(List<LimitStatus> statuses) {
		StringBuilder field = new StringBuilder();
		for (LimitStatus status : statuses) {
			if (field.length() > 0) {
				field.append(", ");
			}
			appendString(field, status.limit().policyName());
			field.append(";r=").append(status.remaining());
			if (!status.limit().isConcurrency()) {
				field.append(";t=").append(ceilSeconds(status.resetMillis()));
			}
		}
		return field.toString();
	}

	/**
	 * A violated limit, else the one with fewest tokens left. A concurrency limit (free slots, not tokens) is chosen
	 * only when it is violated and no rate limit is, or when there is no rate limit.
	 * @param statuses the states of a decision's limits, at least one
	 */
	private static LimitStatus mostConstraining(List<LimitStatus> statuses) {
		LimitStatus tightest = statuses.get(0);
		for (LimitStatus status : statuses) {
			if (rank(status) > rank(tightest) || (rank(status) == rank(tightest)
					&& status.remaining() < tightest.remaining())) {
				tightest = status;
			}
		}
		return tightest;
	}

	/** 3: a violated rate limit; 2: a violated concurrency limit; 1: a satisfied rate limit; 0: a satisfied slot. */
	private static int rank(LimitStatus status) {
		boolean rate = !status.limit().isConcurrency();
		return status.satisfied() ? (rate ? 1 : 0) : (rate ? 3 : 2);
	}

	private static long ceilSeconds(long millis) {
		return (millis <= 0) ? 0 : (millis + 999) / 1000;
	}

	/** Append an RFC 9651 sf-string: printable ASCII, with {@code "} and {@code \} escaped. */
	private static void appendString(StringBuilder field, String value) {
		field.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				field.append('\\').append(c);
			}
			else if (c >= 0x20 && c < 0x7f) {
				field.append(c);
			}
			else {
				field.append('_');
			}
		}
		field.append('"');
	}

}
