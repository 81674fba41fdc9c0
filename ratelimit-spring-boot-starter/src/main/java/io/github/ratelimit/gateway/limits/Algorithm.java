package io.github.ratelimit.gateway.limits;

import java.util.Locale;

/**
 * How one limit is enforced: four rate algorithms, the {@link #CONCURRENCY concurrency} limit and the calendar
 * {@link #QUOTA quota}. Every algorithm
 * runs in the same Lua script over Redis time and answers the same way (satisfied, remaining, retry-after, reset), so
 * headers, 429s and the all-or-nothing rule across several limits do not depend on it. Trade-offs, memory per
 * client and measured precision: {@code src/docs/reference/algorithms.md}.
 *
 * <p>For the window algorithms a limit's {@code capacity} is the number of tokens (requests, at cost 1) admitted per
 * window, and the window is its {@code refill-period}; its {@code refill-tokens} equals the capacity.
 */
public enum Algorithm {

	/**
	 * Token bucket (the default): a bucket of {@code capacity} tokens refilled continuously with
	 * {@code refill-tokens} per {@code refill-period}. Exact; allows a burst of the capacity, then the refill rate.
	 * State: one small hash per client and limit.
	 */
	TOKEN_BUCKET("tb", ""),

	/**
	 * Sliding window log: at most {@code capacity} tokens in any window of one {@code refill-period}, exactly. State:
	 * one sorted-set entry per admitted token, kept one window long, so memory grows with the capacity.
	 */
	SLIDING_WINDOW_LOG("swl", ":swl"),

	/**
	 * Sliding window counter: the count of the current fixed window plus the previous window's count weighted by the
	 * share of the previous window still inside the sliding window (Cloudflare's approximation, which assumes the
	 * previous window's requests were evenly spread). Approximate; two counters per client and limit.
	 */
	SLIDING_WINDOW_COUNTER("swc", ":swc"),

	/**
	 * Fixed window: at most {@code capacity} tokens per window, windows aligned to multiples of the
	 * {@code refill-period} since the Unix epoch (UTC). One counter; a client can pass up to twice the capacity
	 * within one period across a window edge.
	 */
	FIXED_WINDOW("fw", ":fw"),

	/**
	 * Concurrency: at most {@code capacity} requests of a client in flight at once, across every instance (the IETF
	 * quota unit {@code concurrency}). A request takes a slot when it is admitted and gives it back when its response
	 * completes, however it ends; a slot not given back (its instance died) frees itself once it is
	 * {@code refill-period} old, the longest a request may run. One slot per request, whatever its cost. State: one
	 * sorted-set entry per request in flight, and a moving average of how long slots were held (for the
	 * Retry-After estimate). Configured as {@code type: concurrency} with {@code max-in-flight} and
	 * {@code max-request-duration}.
	 */
	CONCURRENCY("cc", ":cc"),

	/**
	 * Calendar quota: at most {@code capacity} tokens per period of the calendar ({@link QuotaPeriod}: a day, week,
	 * month or year in a time zone, or a fixed duration), reset to zero at the period's end, the period picked on
	 * Redis' clock. Configured as {@code type: quota} with {@code limit} and {@code period}. State: one small hash
	 * per client and quota, expiring when its period ends.
	 */
	QUOTA("q", ":q");

	private final String scriptCode;

	private final String keySuffix;

	Algorithm(String scriptCode, String keySuffix) {
		this.scriptCode = scriptCode;
		this.keySuffix = keySuffix;
	}

	/**
	 * The code the Lua script dispatches on.
	 * @return {@code tb}, {@code swl}, {@code swc}, {@code fw}, {@code cc} or {@code q}
	 */
	public String scriptCode() {
		return this.scriptCode;
	}

	/**
	 * Appended to the Redis key of a limit's state, so that state written by one algorithm is never read by another
	 * when a limit's algorithm changes (the old key expires on its own). Empty for the token bucket, whose keys keep
	 * their original names.
	 * @return the suffix, e.g. {@code :swl}, or empty
	 */
	public String keySuffix() {
		return this.keySuffix;
	}

	/**
	 * Whether this is a window algorithm: {@code capacity} tokens per {@code refill-period} window.
	 * @return {@code true} for the sliding window log, the sliding window counter and the fixed window
	 */
	public boolean isWindow() {
		return this == SLIDING_WINDOW_LOG || this == SLIDING_WINDOW_COUNTER || this == FIXED_WINDOW;
	}

	/**
	 * Whether this limits requests in flight rather than a rate.
	 * @return {@code true} only for {@link #CONCURRENCY}
	 */
	public boolean isConcurrency() {
		return this == CONCURRENCY;
	}

	/**
	 * The name used in configuration.
	 * @return e.g. {@code sliding-window-log}
	 */
	public String configName() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
