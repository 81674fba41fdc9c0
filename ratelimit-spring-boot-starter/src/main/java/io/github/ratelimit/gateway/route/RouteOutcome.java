package io.github.ratelimit.gateway.route;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import org.jspecify.annotations.Nullable;

/**
 * What a front end does with one request of a rate limited route, decided by {@link RouteRateLimiter#enforce}:
 * forward it upstream, or answer it with a refusal; in both cases with or without the decision's rate limit header
 * fields.
 *
 * @param decision the limiter's decision
 * @param writesHeaders whether the response carries the decision's {@code RateLimit-Policy}/{@code RateLimit} (or
 * {@code X-RateLimit-*}) fields: always when the route enforces, on shadow routes only with
 * {@code ratelimit.shadow-headers}
 * @param refusal the answer to write instead of forwarding; {@code null} when the request goes upstream
 */
public record RouteOutcome(RateLimitDecision decision, boolean writesHeaders, @Nullable RateLimitRefusal refusal) {

	/**
	 * Whether the request goes upstream.
	 * @return {@code refusal == null}
	 */
	public boolean admitted() {
		return this.refusal == null;
	}

}
