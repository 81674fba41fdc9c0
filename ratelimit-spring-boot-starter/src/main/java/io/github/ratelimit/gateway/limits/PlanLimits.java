package io.github.ratelimit.gateway.limits;

import java.util.List;

/**
 * The limits that apply to one plan in one endpoint group, all checked together: a request is allowed only if
 * every limit allows it, and a denied request consumes from none of them. Value equality (a record): two lookups of
 * the same configuration are equal, so caches keyed by it (script arguments, remembered denials, local buckets)
 * follow a configuration change on the next request.
 *
 * @param plan the plan name
 * @param group the endpoint group name
 * @param limits the limits, in configuration order, not empty
 */
public record PlanLimits(String plan, String group, List<LimitDefinition> limits) {

	public PlanLimits {
		limits = List.copyOf(limits);
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("No limits for plan '" + plan + "' in group '" + group + "'");
		}
	}

	/**
	 * The smallest capacity of these rate limits: no request may cost more. A concurrency limit takes one slot per
	 * request whatever its cost, so it does not count.
	 * @return the smallest capacity in tokens; {@link LimitDefinition#MAX_TOKENS} when every limit is a concurrency
	 * limit
	 */
	public long smallestCapacity() {
		return this.limits.stream()
			.filter((limit) -> !limit.isConcurrency())
			.mapToLong(LimitDefinition::capacity)
			.min()
			.orElse(LimitDefinition.MAX_TOKENS);
	}

	/**
	 * The most tokens one lease of these limits may hold: the smallest {@link LimitDefinition#leaseTokens()} of them,
	 * so 0 (no leases, every request asks the shared store) unless every limit takes leases.
	 * @return tokens, 0 or more
	 */
	public long leaseTokens() {
		long tokens = Long.MAX_VALUE;
		for (int i = 0; i < this.limits.size(); i++) {
			tokens = Math.min(tokens, this.limits.get(i).leaseTokens());
		}
		return tokens;
	}

	/**
	 * Whether any of these limits is a concurrency limit, so that an admitted request holds slots until its response
	 * completes ({@link io.github.ratelimit.gateway.chain.RateLimitDecision#slots()}). Allocates nothing.
	 * @return {@code true} if at least one limit counts requests in flight
	 */
	public boolean hasConcurrencyLimits() {
		for (int i = 0; i < this.limits.size(); i++) {
			if (this.limits.get(i).isConcurrency()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether any of these limits is shared by every client of the group ({@link LimitScope#GLOBAL}). Allocates
	 * nothing, so it can run on every request.
	 * @return {@code true} if at least one limit is global
	 */
	public boolean hasGlobalLimits() {
		for (int i = 0; i < this.limits.size(); i++) {
			if (this.limits.get(i).isGlobal()) {
				return true;
			}
		}
		return false;
	}

}
