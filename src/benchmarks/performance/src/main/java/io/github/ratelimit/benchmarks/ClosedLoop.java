package io.github.ratelimit.benchmarks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Closed loop: {@code concurrency} checks in flight at all times; each answer starts the next check (on the thread
 * that delivered the answer, as a reactive caller would). Keys rotate over {@code keys} clients in order. Latency is
 * from sending a check to its answer; throughput counts answers within the window.
 */
final class ClosedLoop {

	private ClosedLoop() {
	}

	/**
	 * Run for a duration.
	 * @param contender the limiter
	 * @param concurrency checks in flight
	 * @param keys number of distinct clients
	 * @param durationNanos measured window
	 * @param maxChecks stop after this many checks were sent (Long.MAX_VALUE for none)
	 * @return what was observed
	 */
	static LoopResult run(Contender contender, int concurrency, int keys, long durationNanos, long maxChecks)
			throws InterruptedException {
		contender.prepare();
		LoopResult result = new LoopResult();
		AtomicLong sequence = new AtomicLong();
		CountDownLatch finished = new CountDownLatch(concurrency);
		long start = System.nanoTime();
		long deadline = start + durationNanos;
		Worker[] workers = new Worker[concurrency];
		for (int i = 0; i < concurrency; i++) {
			workers[i] = new Worker(contender, keys, sequence, maxChecks, deadline, result, finished);
		}
		for (Worker worker : workers) {
			worker.next();
		}
		if (!finished.await(durationNanos + TimeUnit.SECONDS.toNanos(60), TimeUnit.NANOSECONDS)) {
			throw new IllegalStateException(contender.name() + ": checks still unanswered 60 s after the window");
		}
		long end = Math.min(System.nanoTime(), deadline);
		result.seconds = (end - start) / 1e9;
		return result;
	}

	/** One in-flight slot. A trampoline, so answers delivered synchronously do not grow the stack. */
	private static final class Worker implements Contender.Sink {

		private final Contender contender;

		private final int keys;

		private final AtomicLong sequence;

		private final long maxChecks;

		private final long deadline;

		private final LoopResult result;

		private final CountDownLatch finished;

		private final AtomicInteger wip = new AtomicInteger();

		private long sentAt;

		Worker(Contender contender, int keys, AtomicLong sequence, long maxChecks, long deadline, LoopResult result,
				CountDownLatch finished) {
			this.contender = contender;
			this.keys = keys;
			this.sequence = sequence;
			this.maxChecks = maxChecks;
			this.deadline = deadline;
			this.result = result;
			this.finished = finished;
		}

		void next() {
			if (this.wip.getAndIncrement() != 0) {
				return;
			}
			do {
				long now = System.nanoTime();
				long n = this.sequence.getAndIncrement();
				if (now - this.deadline >= 0 || n >= this.maxChecks) {
					this.finished.countDown();
					return;
				}
				this.sentAt = now;
				try {
					this.contender.check((int) (n % this.keys), this);
				}
				catch (RuntimeException ex) {
					failed(ex);
				}
			}
			while (this.wip.decrementAndGet() != 0);
		}

		@Override
		public void done(boolean allowed, String source) {
			long now = System.nanoTime();
			if (now - this.deadline <= 0) {
				this.result.record(now - this.sentAt, allowed, source);
			}
			next();
		}

		@Override
		public void failed(Throwable error) {
			long now = System.nanoTime();
			if (now - this.deadline <= 0) {
				this.result.recordError(now - this.sentAt, error);
			}
			next();
		}

	}

}
