package io.github.ratelimit.frontends;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.protection.Priority;

/**
 * The gateway's {@link RateLimitMetrics} (this module has no Micrometer, so the starter's own meters are not there):
 * counts the requests the handler reports shed, or in shadow mode would have shed, by protection, priority and
 * shadow; records nothing else. A replaceable bean of the starter, as a user's own metrics would be.
 */
final class Sheds implements RateLimitMetrics {

	private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

	@Override
	public void recordShed(String route, String group, String protection, Priority priority, boolean shadow) {
		this.counts.computeIfAbsent(key(protection, priority, shadow), (key) -> new AtomicInteger()).incrementAndGet();
	}

	/**
	 * Requests shed (or, with {@code shadow}, that would have been) since the gateway started.
	 * @param protection the protection's name
	 * @param priority the requests' priority
	 * @param shadow whether they were forwarded all the same
	 * @return a count, 0 or more
	 */
	int count(String protection, Priority priority, boolean shadow) {
		AtomicInteger count = this.counts.get(key(protection, priority, shadow));
		return (count != null) ? count.get() : 0;
	}

	private static String key(String protection, Priority priority, boolean shadow) {
		return protection + '|' + priority.tag() + '|' + shadow;
	}

}
