package io.github.ratelimit.gateway.chain;

/** What non-critical routes do while Redis is unavailable. */
public enum FallbackMode {

	/** Limit each client by a local in-memory token bucket holding this instance's share of each limit. */
	LOCAL,

	/** Let every request through, unlimited. */
	ALLOW

}
