package io.github.ratelimit.gateway.filter;

import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;

/**
 * Logs limiter failures at WARN at most once per interval, counting what it suppressed in between, so an outage at
 * thousands of requests per second does not flood the log.
 */
final class FailureLog {

	private final Logger logger;

	private final long intervalNanos;

	private final AtomicLong nextLogAt = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong suppressed = new AtomicLong();

	FailureLog(Logger logger, long intervalMillis) {
		this.logger = logger;
		this.intervalNanos = intervalMillis * 1_000_000L;
	}

	void failed(String group, Throwable error) {
		long now = System.nanoTime();
		long next = this.nextLogAt.get();
		if ((next == Long.MIN_VALUE || now - next >= 0) && this.nextLogAt.compareAndSet(next, now + this.intervalNanos)) {
			long skipped = this.suppressed.getAndSet(0);
			this.logger.warn("Rate limiter unavailable (group '{}'): {}; letting the request through{}", group,
					error.toString(), (skipped > 0) ? " (" + skipped + " similar failures not logged)" : "");
		}
		else {
			this.suppressed.incrementAndGet();
		}
	}

}
