package io.github.ratelimit.gateway.client;

/** What identifies the client a route limits. */
public enum KeyBy {

	/**
	 * The API key from the configured header, with the plan it maps to; requests without a known key fall back to
	 * the client IP address under the anonymous plan.
	 */
	API_KEY,

	/** The client IP address, always under the anonymous plan (for login, OTP and public routes). */
	IP

}
