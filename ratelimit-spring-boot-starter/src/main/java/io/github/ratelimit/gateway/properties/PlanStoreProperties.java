package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.properties.PropertyRules.Min;
import io.github.ratelimit.gateway.properties.PropertyRules.NotBlank;
import io.github.ratelimit.gateway.properties.PropertyRules.NotNegativeDuration;
import io.github.ratelimit.gateway.properties.PropertyRules.PositiveDuration;
import io.github.ratelimit.gateway.properties.PropertyRules.PositiveOrZero;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Where the plans of API keys come from, bound from {@code ratelimit.plan-store.*}: the static map
 * {@code ratelimit.api-keys} (the default, for small installs), or Redis, looked up through a bounded local cache
 * (see {@code src/docs/reference/plan-store.md} for the key layout the provisioning side writes).
 */
@ConfigurationProperties(prefix = PlanStoreProperties.PREFIX)
public class PlanStoreProperties {

	/** Prefix of these properties. */
	public static final String PREFIX = "ratelimit.plan-store";

	/**
	 * Where plans are looked up: static (only ratelimit.api-keys) or redis (keys made of the key prefix and the
	 * SHA-256 of the API key, holding the plan name, cached locally; ratelimit.api-keys entries still apply first).
	 */
	private Type type = Type.STATIC;

	/**
	 * Prefix of the Redis keys holding plans; a key is this prefix followed by the unpadded base64url SHA-256 of the
	 * API key. Default: ratelimit.key-prefix followed by ":plan:", i.e. "rl:plan:".
	 */
	@NotBlank(optional = true,
			fix = "remove it (default rl:plan:) or set the prefix the provisioning side writes, e.g. rl:plan:.")
	private @Nullable String keyPrefix;

	/**
	 * Longest wait for one plan look-up in Redis; past it the request is limited by IP under the anonymous plan
	 * (nothing is cached). Default: ratelimit.redis-timeout.
	 */
	@PositiveDuration(optional = true, fix = "remove it (default: ratelimit.redis-timeout) or set e.g. 20ms.")
	private @Nullable Duration timeout;

	/**
	 * Most Redis look-ups per second and instance for API keys not in the cache (0 = no bound). Beyond it a key not
	 * in the cache is limited by IP for that request, without a look-up and without caching, so a client sending
	 * random keys costs Redis at most this many look-ups per second per instance.
	 */
	@PositiveOrZero(zero = "no bound", fix = "set the most look-ups per second of uncached keys, e.g. 5000.")
	private int maxLookupsPerSecond = 5000;

	/** The local cache of plan look-ups. */
	private final Cache cache = new Cache();

	public Type getType() {
		return this.type;
	}

	public void setType(Type type) {
		this.type = type;
	}

	public @Nullable String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(@Nullable String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public @Nullable Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(@Nullable Duration timeout) {
		this.timeout = timeout;
	}

	public int getMaxLookupsPerSecond() {
		return this.maxLookupsPerSecond;
	}

	public void setMaxLookupsPerSecond(int maxLookupsPerSecond) {
		this.maxLookupsPerSecond = maxLookupsPerSecond;
	}

	public Cache getCache() {
		return this.cache;
	}

	/**
	 * The problems of these properties.
	 * @return the violations, empty when valid
	 */
	public List<ConfigurationViolation> validate() {
		return PropertyRules.check(this, PREFIX);
	}

	/** Where plans are looked up. */
	public enum Type {

		/** Only the static map {@code ratelimit.api-keys}. */
		STATIC,

		/** Redis (through a local cache); {@code ratelimit.api-keys} entries still apply first. */
		REDIS

	}

	/** The local cache of plan look-ups, one per gateway instance. */
	public static class Cache {

		/**
		 * Most API keys (known and unknown) cached per instance, about 360 bytes of heap each (the default: about
		 * 36 MB at most). When full,
		 * keys seen rarely are evicted first (Caffeine's frequency-based admission), so a flood of one-off fake keys
		 * does not push out the keys of active clients.
		 */
		@Min(value = 1, fix = "set the most API keys cached per instance, e.g. 100000 (about 36 MB).")
		private long maxSize = 100_000;

		/**
		 * How long a looked-up plan is used before it is looked up again (in the background, on the next request
		 * after it; that request still gets the cached plan). Plan changes and revocations take effect within it.
		 */
		@PositiveDuration(fix = "set how long a looked-up plan is used before it is looked up again, e.g. 5m (plan "
				+ "changes and revocations take effect within it).")
		private Duration ttl = Duration.ofMinutes(5);

		/**
		 * How long a key the store does not know stays cached as unknown (0 = not cached). Shorter than ttl, so a
		 * newly provisioned key starts working soon.
		 */
		@NotNegativeDuration(fix = "set how long an unknown key stays known as unknown, e.g. 30s (0 looks unknown keys "
				+ "up every time).")
		private Duration negativeTtl = Duration.ofSeconds(30);

		/**
		 * How long past ttl a cached plan is still used while it cannot be looked up again (Redis
		 * unavailable), so paying clients keep their plan through an outage instead of dropping to the anonymous
		 * plan.
		 */
		@NotNegativeDuration(fix = "set how long past its TTL a cached plan may serve while Redis cannot be reached, "
				+ "e.g. 1h (0 = never).")
		private Duration maxStale = Duration.ofHours(1);

		public long getMaxSize() {
			return this.maxSize;
		}

		public void setMaxSize(long maxSize) {
			this.maxSize = maxSize;
		}

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

		public Duration getNegativeTtl() {
			return this.negativeTtl;
		}

		public void setNegativeTtl(Duration negativeTtl) {
			this.negativeTtl = negativeTtl;
		}

		public Duration getMaxStale() {
			return this.maxStale;
		}

		public void setMaxStale(Duration maxStale) {
			this.maxStale = maxStale;
		}

	}

}
