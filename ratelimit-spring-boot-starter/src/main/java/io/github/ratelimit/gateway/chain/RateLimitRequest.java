package io.github.ratelimit.gateway.chain;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * One request to the limiter chain, as a front end (the {@code RateLimit} gateway filter) builds it: who, which
 * limits, how many tokens, and what happens when the shared store cannot decide.
 *
 * @param client who is limited, with the plan already decided
 * @param limits the limits of the client's plan in the route's endpoint group
 * @param cost tokens the request takes from each limit counting requests (1 to {@link PlanLimits#smallestCapacity()};
 * 0 only reads), and units of usage it reserves in each limit counting usage (0 to the smallest capacity of those
 * limits)
 * @param failClosed whether the request is refused (the front end answers 503) when the shared store is unavailable;
 * otherwise it fails open (local fallback, or unchecked with {@link FallbackMode#ALLOW})
 */
public record RateLimitRequest(ClientKey client, PlanLimits limits, Cost cost, boolean failClosed) {

	/**
	 * A request taking tokens only, reserving nothing.
	 * @param client who is limited, with the plan already decided
	 * @param limits the limits of the client's plan in the route's endpoint group
	 * @param tokens tokens the request takes from each limit counting requests
	 * @param failClosed whether the request is refused when the shared store is unavailable
	 */
	public RateLimitRequest(ClientKey client, PlanLimits limits, long tokens, boolean failClosed) {
		this(client, limits, Cost.tokens(tokens), failClosed);
	}

}
