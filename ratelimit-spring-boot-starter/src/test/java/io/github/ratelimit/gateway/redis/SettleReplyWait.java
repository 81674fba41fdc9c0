package io.github.ratelimit.gateway.redis;

import java.time.Duration;

/**
 * Lowers how long a gateway's store waits for a settlement's reply (and so its deadline), for route tests outside
 * this package that pause Redis beyond it without waiting {@link RedisRateLimitStore#SETTLE_REPLY_WAIT}.
 */
public final class SettleReplyWait {

	private SettleReplyWait() {
	}

	/**
	 * Set the store's wait for settlements' replies.
	 * @param store the gateway's store
	 * @param wait above 0, at most {@link LimiterConnectionFactory#MIN_SCRIPT_REPLY_TIMEOUT}
	 */
	public static void set(RedisRateLimitStore store, Duration wait) {
		store.settleReplyWait(wait);
	}

}
