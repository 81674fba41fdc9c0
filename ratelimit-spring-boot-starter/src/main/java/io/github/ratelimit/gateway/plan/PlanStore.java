package io.github.ratelimit.gateway.plan;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A store of API key → plan, looked up by the key's hash ({@link ApiKey#hash()}), never by the raw key: the
 * system that provisions keys writes hashes only. {@link CachingPlanResolver} turns a store into the
 * {@link PlanResolver} the filter uses, with a bounded local cache. The starter's store is Redis
 * ({@code ratelimit.plan-store.type=redis}); declare a bean of this type to look plans up elsewhere.
 */
@FunctionalInterface
public interface PlanStore {

	/**
	 * Find the plan of an API key.
	 * @param keyHash the key's {@link #keyHash(String) hash}
	 * @return the plan name, empty when the store does not know the key, or completed exceptionally when the store
	 * cannot be reached (nothing is cached then)
	 */
	CompletionStage<Optional<String>> findPlan(String keyHash);

	/**
	 * The identifier a plan store holds for an API key: the SHA-256 of its UTF-8 bytes, base64url without padding
	 * (43 characters). In a shell: {@code printf %s "$KEY" | openssl dgst -sha256 -binary | basenc --base64url | tr -d =}.
	 * @param apiKey the raw API key
	 * @return the hash
	 */
	static String keyHash(String apiKey) {
		return ApiKey.of(apiKey).hash();
	}

}
