package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import org.jspecify.annotations.Nullable;

/**
 * The deadline of one check (or of one store call made outside a check): its start, the one clock every layer
 * measures the check's duration on, and what happens when it passes. When it passes, the store calls waiting on it
 * are told first (their shard's breaker records each as failed), then its owner (the failure policy decides without
 * the store). Made by {@link Deadlines}; thread-safe.
 */
final class Deadline implements TimerTask {

	private final Timer timer;

	private final Duration timeout;

	private final long startNanos;

	/** Calls waiting on this deadline; guarded by this object's monitor. */
	private @Nullable List<Runnable> calls;

	private boolean passed;

	private @Nullable Runnable owner;

	private volatile @Nullable Timeout scheduled;

	Deadline(Timer timer, Duration timeout, long startNanos) {
		this.timer = timer;
		this.timeout = timeout;
		this.startNanos = startNanos;
	}

	/**
	 * The time since the start.
	 * @return nanoseconds since the check started (0 or more)
	 */
	long elapsedNanos() {
		return Math.max(0, System.nanoTime() - this.startNanos);
	}

	/**
	 * The start.
	 * @return {@link System#nanoTime()} when the check started
	 */
	long startNanos() {
		return this.startNanos;
	}

	/**
	 * The moment the check is given up.
	 * @return {@link System#nanoTime()} when the timeout has passed since the start
	 */
	long endNanos() {
		return this.startNanos + this.timeout.toNanos();
	}

	/**
	 * Start timing: when the timeout has passed since the start, the calls waiting are told, then the owner.
	 * @param owner told last when the deadline passes ({@code null}: nobody but the calls)
	 */
	void schedule(@Nullable Runnable owner) {
		this.owner = owner;
		long remaining = this.timeout.toNanos() - (System.nanoTime() - this.startNanos);
		this.scheduled = this.timer.newTimeout(this, Math.max(0, remaining), TimeUnit.NANOSECONDS);
	}

	/**
	 * Be told when the deadline passes.
	 * @param call told when it passes (once, on a pool thread)
	 * @return {@code false} if it has passed already (the call is not told)
	 */
	boolean onPassed(Runnable call) {
		synchronized (this) {
			if (this.passed) {
				return false;
			}
			if (this.calls == null) {
				this.calls = new ArrayList<>(2);
			}
			this.calls.add(call);
			return true;
		}
	}

	/** Stop timing: nothing is told (the check is decided, or the call answered). */
	void cancel() {
		Timeout timer = this.scheduled;
		if (timer != null) {
			timer.cancel();
		}
	}

	/**
	 * The failure of a call the deadline passed for.
	 * @param what what did not answer
	 * @return the exception
	 */
	TimeoutException timeoutException(String what) {
		return new TimeoutException("No answer from " + what + " within " + this.timeout);
	}

	/** The deadline passed (on a pool thread, handed over by the timer). */
	@Override
	public void run(Timeout expired) {
		List<Runnable> waiting;
		synchronized (this) {
			this.passed = true;
			waiting = this.calls;
			this.calls = null;
		}
		if (waiting != null) {
			waiting.forEach(Runnable::run);
		}
		Runnable told = this.owner;
		if (told != null) {
			told.run();
		}
	}

}
