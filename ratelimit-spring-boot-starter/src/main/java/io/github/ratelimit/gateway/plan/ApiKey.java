package io.github.ratelimit.gateway.plan;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * An API key taken from a request, hashed once: its SHA-256 digest gives both the identifier a {@link PlanStore}
 * holds ({@link #hash()}) and the one in the client's Redis key names and logs ({@link #id()}). The raw key is a
 * credential: {@link #toString()} shows only the id.
 */
public final class ApiKey {

	private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	});

	private final String value;

	private final byte[] sha256;

	private ApiKey(String value) {
		this.value = value;
		MessageDigest digest = SHA256.get();
		digest.reset();
		this.sha256 = digest.digest(value.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Hash an API key.
	 * @param value the raw key, not {@code null}
	 * @return the key with its digest
	 */
	public static ApiKey of(String value) {
		return new ApiKey(value);
	}

	/**
	 * The raw key, as the request carried it; a credential, never to be logged or stored.
	 * @return the key
	 */
	public String value() {
		return this.value;
	}

	/**
	 * The identifier a plan store holds for the key: the SHA-256 of its UTF-8 bytes, base64url without padding
	 * (43 characters); see {@link PlanStore#keyHash(String)}.
	 * @return the hash
	 */
	public String hash() {
		return Base64.getUrlEncoder().withoutPadding().encodeToString(this.sha256);
	}

	/**
	 * The identifier of the client in Redis key names and logs: the first 128 bits of the same digest, base64url
	 * without padding (22 characters).
	 * @return the id
	 */
	public String id() {
		return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(this.sha256, 16));
	}

	@Override
	public String toString() {
		return "ApiKey[sha256:" + id() + "]";
	}

}
