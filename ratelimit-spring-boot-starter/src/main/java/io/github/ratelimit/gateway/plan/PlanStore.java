package io.github.ratelimit.gateway.plan;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import reactor.core.publisher.Mono;

/**
 * A store of API key → plan, looked up by the key's hash ({@link #keyHash(String)}), never by the raw key: the
 * system that provisions keys writes hashes only. {@link CachingPlanResolver} turns a store into the
 * {@link PlanResolver} the filter uses, with a bounded local cache. The starter's store is Redis
 * ({@code ratelimit.plan-store.type=redis}); declare a bean of this type to look plans up elsewhere.
 */
@FunctionalInterface
public interface PlanStore {

	/**
	 * Find the plan of an API key.
	 * @param keyHash the key's {@link #keyHash(String) hash}
	 * @return the plan name, empty when the store does not know the key, or an error when the store cannot be
	 * reached (nothing is cached then)
	 */
	Mono<String> findPlan(String keyHash);

	/**
	 * The identifier a plan store holds for an API key: the SHA-256 of its UTF-8 bytes, base64url without padding
	 * (43 characters). In a shell: {@code printf %s "$KEY" | openssl dgst -sha256 -binary | basenc --base64url | tr -d =}.
	 * @param apiKey the raw API key
	 * @return the hash
	 */
	static String keyHash(String apiKey) {
		try {
			byte[] sha = MessageDigest.getInstance("SHA-256").digest(apiKey.getBytes(StandardCharsets.UTF_8));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(sha);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}
