package io.github.ratelimit.gateway.support;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A log line written at most once per interval, counting the occurrences not written in between: for problems that
 * can repeat on every request (a store that is down, a flood of unknown keys), so the log shows that they happen
 * and how often without one line per request.
 *
 * <pre>
 * private final ThrottledLog failures = new ThrottledLog(Duration.ofSeconds(10));
 * ...
 * this.failures.log((skipped) -&gt; logger.warn("Store unavailable ({}){}", reason, ThrottledLog.notLogged(skipped)));
 * </pre>
 *
 * <p>The first occurrence is written; later ones are written once {@code interval} has passed since the last
 * written one, each with the number suppressed since then. Thread-safe and lock-free: of concurrent occurrences
 * at most one is written per interval, the others are counted, each once (an occurrence concurrent with a written
 * one may be counted in that line or in the next). Time comes from {@link System#nanoTime()} unless a clock is
 * given.
 */
public final class ThrottledLog {

	private final long intervalNanos;

	private final LongSupplier nanoTime;

	private final AtomicLong nextAt = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong suppressed = new AtomicLong();

	/**
	 * Create a throttled log line on {@link System#nanoTime()}.
	 * @param interval least time between two written lines, positive
	 * @throws IllegalArgumentException if {@code interval} is not positive
	 */
	public ThrottledLog(Duration interval) {
		this(interval, System::nanoTime);
	}

	/**
	 * Create a throttled log line on a clock of its own (for tests).
	 * @param interval least time between two written lines, positive
	 * @param nanoTime monotonic time in nanoseconds, like {@link System#nanoTime()}
	 * @throws IllegalArgumentException if {@code interval} is not positive
	 */
	public ThrottledLog(Duration interval, LongSupplier nanoTime) {
		if (interval.isZero() || interval.isNegative()) {
			throw new IllegalArgumentException("The interval must be positive, was " + interval);
		}
		this.intervalNanos = interval.toNanos();
		this.nanoTime = nanoTime;
	}

	/**
	 * Record one occurrence, writing it if the interval since the last written one has passed.
	 * @param write writes the line; it is given the number of occurrences suppressed since the previous written one
	 * (0 if none) and runs on the calling thread, at most once per interval
	 * @return whether {@code write} ran
	 */
	public boolean log(LongConsumer write) {
		long now = this.nanoTime.getAsLong();
		long next = this.nextAt.get();
		if ((next == Long.MIN_VALUE || now - next >= 0) && this.nextAt.compareAndSet(next, now + this.intervalNanos)) {
			write.accept(this.suppressed.getAndSet(0));
			return true;
		}
		this.suppressed.incrementAndGet();
		return false;
	}

	/**
	 * The usual tail of a throttled line: {@code " (N similar not logged)"}, or nothing when none was suppressed.
	 * @param skipped the number passed to the {@link #log(LongConsumer) write} callback
	 * @return the text to append, empty when {@code skipped} is 0
	 */
	public static String notLogged(long skipped) {
		return (skipped > 0) ? " (" + skipped + " similar not logged)" : "";
	}

}
