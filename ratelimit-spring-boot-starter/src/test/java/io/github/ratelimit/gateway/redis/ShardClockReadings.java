package io.github.ratelimit.gateway.redis;

import java.util.Map;
import java.util.TreeMap;

/**
 * What a gateway's store knows of its shards' clocks, for route tests outside this package: whether each shard (each
 * Cluster master) has been sampled, and the Redis time it would send as a deadline.
 */
public final class ShardClockReadings {

	private ShardClockReadings() {
	}

	/**
	 * The local time now in each shard's time, as the store would send a deadline falling now.
	 * @param store the gateway's store
	 * @return per shard name ({@link RedisRateLimitStore#shards()}), microseconds since the epoch; 0 for a shard whose
	 * clock has not been read yet
	 */
	public static Map<String, Long> nowInEachShard(RedisRateLimitStore store) {
		Map<String, Long> now = new TreeMap<>();
		long nanos = System.nanoTime();
		for (String shard : store.shards()) {
			now.put(shard, store.clocks().deadlineMicros(shard, nanos));
		}
		return now;
	}

}
