package io.github.ratelimit.gateway.redis;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.gateway.plan.PlanStore;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * {@link PlanStore} in Redis: one string key per API key, {@code <prefix><hash>} holding the plan name, where
 * {@code hash} is {@link PlanStore#keyHash(String)} of the key (e.g. {@code rl:plan:n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg}
 * → {@code pro}). The keys carry no hash tag, so on a Redis Cluster they spread over every master. The layout is
 * documented for the provisioning side in {@code src/docs/reference/plan-store.md}. Spring Data's reactive template is its
 * way in: the one place outside the WebFlux front end that turns a {@code Mono} into a future.
 */
public class RedisPlanStore implements PlanStore {

	/** Default key prefix when {@code ratelimit.key-prefix} is {@code rl}. */
	public static final String DEFAULT_KEY_PREFIX = "rl:plan:";

	private final ReactiveStringRedisTemplate redis;

	private final String keyPrefix;

	private volatile boolean connected;

	/**
	 * Create a store.
	 * @param redis the template used for look-ups
	 * @param keyPrefix prefix of the plan keys, e.g. {@value #DEFAULT_KEY_PREFIX}
	 */
	public RedisPlanStore(ReactiveStringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.keyPrefix = keyPrefix;
	}

	/**
	 * The Redis key holding the plan of an API key.
	 * @param keyPrefix the prefix, e.g. {@value #DEFAULT_KEY_PREFIX}
	 * @param apiKey the raw API key
	 * @return the key, e.g. {@code rl:plan:n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg}
	 */
	public static String planKey(String keyPrefix, String apiKey) {
		return keyPrefix + PlanStore.keyHash(apiKey);
	}

	@Override
	public CompletionStage<Optional<String>> findPlan(String keyHash) {
		Mono<String> get = this.redis.opsForValue().get(this.keyPrefix + keyHash);
		if (this.connected) {
			return get.map(Optional::of).defaultIfEmpty(Optional.empty()).toFuture();
		}
		// the first connect may block: off the caller's thread (src/docs/design/request-path.md)
		CompletableFuture<Optional<String>> found = get.subscribeOn(Schedulers.boundedElastic())
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.toFuture();
		return found.thenApply((plan) -> {
			this.connected = true;
			return plan;
		});
	}

	/**
	 * The prefix of the plan keys.
	 * @return the prefix
	 */
	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	@Override
	public String toString() {
		return "RedisPlanStore[" + this.keyPrefix + "<sha256>]";
	}

}
