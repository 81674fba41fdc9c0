package io.github.ratelimit.gateway.chain;

import java.time.Duration;

import io.netty.util.Timer;

/**
 * The deadlines of the chain: one timeout ({@code ratelimit.redis-timeout}) and one timer wheel for every check and
 * every store call made outside a check. Owned by the failure policy; closing it stops the timer's thread.
 */
final class Deadlines implements AutoCloseable {

	private final Duration timeout;

	private final Timer timer;

	/**
	 * Create the deadlines.
	 * @param timeout the longest wait for the store per check (positive)
	 */
	Deadlines(Duration timeout) {
		this.timeout = timeout;
		this.timer = CheckTimer.newTimer(timeout, "ratelimit-timeouts");
	}

	/**
	 * A deadline starting now.
	 * @return the deadline, not scheduled yet
	 */
	Deadline start() {
		return startedAt(System.nanoTime());
	}

	/**
	 * A deadline that started at a given time.
	 * @param startNanos {@link System#nanoTime()} at the start
	 * @return the deadline, not scheduled yet
	 */
	Deadline startedAt(long startNanos) {
		return new Deadline(this.timer, this.timeout, startNanos);
	}

	/**
	 * The timeout.
	 * @return the longest wait per check
	 */
	Duration timeout() {
		return this.timeout;
	}

	@Override
	public void close() {
		this.timer.stop();
	}

}
