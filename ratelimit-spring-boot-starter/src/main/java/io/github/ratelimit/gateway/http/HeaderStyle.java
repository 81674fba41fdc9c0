package io.github.ratelimit.gateway.http;

/** Which rate limit header fields a response carries. */
public enum HeaderStyle {

	/**
	 * {@code RateLimit-Policy} and {@code RateLimit} structured fields of the IETF draft
	 * draft-ietf-httpapi-ratelimit-headers (revision 10).
	 */
	IETF,

	/** The widespread {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}. */
	LEGACY,

	/** Both the IETF fields and the legacy ones. */
	BOTH,

	/** No rate limit fields (a denial still carries {@code Retry-After}). */
	NONE

}
