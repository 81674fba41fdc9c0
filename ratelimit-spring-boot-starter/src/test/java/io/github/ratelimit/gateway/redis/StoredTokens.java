package io.github.ratelimit.gateway.redis;

import java.util.function.Function;

/**
 * Reads how many tokens a token bucket holds from its state in Redis (the GCRA form: the time at which the bucket is
 * full again, see {@code token_bucket.lua}), at Redis' own time, for tests that check what the script stored.
 */
public final class StoredTokens {

	private StoredTokens() {
	}

	/**
	 * The tokens the bucket under a key holds now.
	 * @param redis runs a command on the node holding the key (e.g. {@code testRedis::command})
	 * @param key the bucket's key
	 * @param capacity the limit's capacity
	 * @param refillTokens tokens per refill period
	 * @param periodMicros the refill period in microseconds
	 * @return tokens (fractional), the capacity when the key is missing
	 */
	public static double of(Function<String[], String> redis, String key, long capacity, long refillTokens,
			long periodMicros) {
		String value = redis.apply(new String[] { "GET", key });
		if (value == null) {
			return capacity;
		}
		String[] time = redis.apply(new String[] { "TIME" }).split("\n");
		long now = Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
		long tat = Long.parseLong(value.split(":")[0]);
		return capacity - Math.max(0, tat - now) * (double) refillTokens / periodMicros;
	}

}
