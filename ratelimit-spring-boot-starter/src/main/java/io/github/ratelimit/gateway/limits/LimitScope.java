package io.github.ratelimit.gateway.limits;

import java.util.Locale;

/**
 * Who shares one limit's bucket (or window).
 *
 * <p>A request is checked against every limit of its (plan, endpoint group), whatever their scopes, all-or-nothing:
 * it is admitted only if every limit admits it, and a denied request takes nothing from any of them. A client denied
 * by one of its own limits never takes from a {@link #GLOBAL} limit.
 */
public enum LimitScope {

	/**
	 * One bucket per client (API key or IP address) in the endpoint group: the default, the plan's rate per client.
	 */
	CLIENT,

	/**
	 * One bucket shared by every client of the endpoint group, whatever their plan: a cap on the group's total
	 * traffic that protects the backend behind it. Redis key {@code <prefix>:{<group>|g:all}:<i>}, in another Redis
	 * Cluster slot than any client's keys, so a request with both kinds of limits takes two script calls (see
	 * {@code src/docs/reference/algorithms.md}, "Global limits").
	 */
	GLOBAL;

	/**
	 * The name used in configuration.
	 * @return {@code client} or {@code global}
	 */
	public String configName() {
		return name().toLowerCase(Locale.ROOT);
	}

}
