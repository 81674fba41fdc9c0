package io.github.ratelimit.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.Histogram;

/**
 * Open loop at a fixed offered load: check i is due at {@code start + i / rate}, whatever happened to earlier
 * checks, and its latency is measured from that intended time (not from when it was actually sent), so a stall
 * counts against every check it delays: no coordinated omission. One sender thread sleeps until each due time; how
 * late it sends is recorded separately (the harness' own contribution, already included in the latency).
 */
final class OpenLoop {

	private OpenLoop() {
	}

	static final class Result {

		final LoopResult checks = new LoopResult();

		final Histogram sendLag = new Histogram(3);

		long sent;

	}

	static Result run(Contender contender, int keys, double perSecond, long durationNanos) throws InterruptedException {
		contender.prepare();
		Result result = new Result();
		AtomicLong outstanding = new AtomicLong();
		double interval = 1e9 / perSecond;
		long count = (long) (durationNanos / interval);
		long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5);
		for (long i = 0; i < count; i++) {
			long intended = start + (long) (i * interval);
			long now;
			while ((now = System.nanoTime()) < intended) {
				LockSupport.parkNanos(intended - now);
			}
			result.sendLag.recordValue(now - intended);
			outstanding.incrementAndGet();
			long due = intended;
			try {
				contender.check((int) (i % keys), new Contender.Sink() {
					@Override
					public void done(boolean allowed, String source) {
						result.checks.record(System.nanoTime() - due, allowed, source);
						outstanding.decrementAndGet();
					}

					@Override
					public void failed(Throwable error) {
						result.checks.recordError(System.nanoTime() - due, error);
						outstanding.decrementAndGet();
					}
				});
			}
			catch (RuntimeException ex) {
				result.checks.recordError(System.nanoTime() - due, ex);
				outstanding.decrementAndGet();
			}
		}
		long sendEnd = System.nanoTime();
		long waitUntil = sendEnd + TimeUnit.SECONDS.toNanos(30);
		while (outstanding.get() > 0 && System.nanoTime() < waitUntil) {
			Thread.sleep(1);
		}
		result.sent = count;
		result.checks.seconds = (sendEnd - start) / 1e9;
		return result;
	}

}
