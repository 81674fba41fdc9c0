package io.github.ratelimit.gateway.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Turns an API key (a credential) into the identifier stored in Redis key names and logs: the first 128 bits of
 * its SHA-256 digest, base64url without padding (22 characters). The raw key is never stored. Principal names and
 * header values are hashed the same way; being unsalted, their hash is a pseudonym, not a secret, where the value is
 * guessable (an e-mail address, a tenant id).
 */
public final class ApiKeyHasher {

	private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	});

	private ApiKeyHasher() {
	}

	/**
	 * Hash an API key.
	 * @param apiKey the raw key, not {@code null}
	 * @return a 22-character base64url identifier
	 */
	public static String hash(String apiKey) {
		MessageDigest digest = SHA256.get();
		digest.reset();
		byte[] sha = digest.digest(apiKey.getBytes(StandardCharsets.UTF_8));
		return Base64.getUrlEncoder().withoutPadding().encodeToString(java.util.Arrays.copyOf(sha, 16));
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
