package io.github.ratelimit.gateway.client;

/**
 * Signals that a request names more than one client, e.g. two API key header lines or one line with a
 * comma-separated list of keys: the limiter could count one of them while an upstream authenticates another. A
 * {@link ClientKeyResolver} completes with this error; the filter answers 400 Bad Request with a problem body.
 * The message names what is ambiguous (a header name), never a credential.
 */
public class AmbiguousClientException extends RuntimeException {

	/**
	 * Create the exception (no stack trace: it is an answer to a bad request, not a fault).
	 * @param message what is ambiguous, safe to show to the client and to log
	 */
	public AmbiguousClientException(String message) {
		super(message, null, false, false);
	}

}
