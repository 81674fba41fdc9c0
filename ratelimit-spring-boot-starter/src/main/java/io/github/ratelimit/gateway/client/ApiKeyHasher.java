package io.github.ratelimit.gateway.client;

import io.github.ratelimit.gateway.plan.ApiKey;

/**
 * Turns an API key (a credential) into the identifier stored in Redis key names and logs: the first 128 bits of
 * its SHA-256 digest, base64url without padding (22 characters). The raw key is never stored. Principal names and
 * header values are hashed the same way; being unsalted, their hash is a pseudonym, not a secret, where the value is
 * guessable (an e-mail address, a tenant id).
 */
public final class ApiKeyHasher {

	private ApiKeyHasher() {
	}

	/**
	 * Hash an API key.
	 * @param apiKey the raw key, not {@code null}
	 * @return a 22-character base64url identifier
	 */
	public static String hash(String apiKey) {
		return ApiKey.of(apiKey).id();
	}

	/**
	 * A form of an API key for messages shown to operators: {@code sha256:} and its hash (as in Redis key names),
	 * nothing of the key itself.
	 * @param apiKey the raw key
	 * @return the masked form
	 */
	public static String mask(String apiKey) {
		return "sha256:" + hash(apiKey);
	}

}
