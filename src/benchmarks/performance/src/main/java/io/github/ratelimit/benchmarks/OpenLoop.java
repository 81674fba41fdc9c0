package io.github.ratelimit.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

	private static void finish(AtomicLong outstanding, CompletableFuture<Void> drained) {
		if (outstanding.decrementAndGet() == 0) {
			drained.complete(null);
		}
	}

	static Result run(Contender contender, int keys, double perSecond, long durationNanos) throws InterruptedException {
		contender.prepare();
		Result result = new Result();
		// checks not answered yet, plus 1 for the sender until it is done; the last to finish completes `drained`
		AtomicLong outstanding = new AtomicLong(1);
		CompletableFuture<Void> drained = new CompletableFuture<>();
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
						finish(outstanding, drained);
					}

					@Override
					public void failed(Throwable error) {
						result.checks.recordError(System.nanoTime() - due, error);
						finish(outstanding, drained);
					}
				});
			}
			catch (RuntimeException ex) {
				result.checks.recordError(System.nanoTime() - due, ex);
				finish(outstanding, drained);
			}
		}
		long sendEnd = System.nanoTime();
		finish(outstanding, drained);
		try {
			drained.get(30, TimeUnit.SECONDS); // answers still missing after 30 s stay counted as undecided
		}
		catch (ExecutionException | TimeoutException ex) {
			// nothing to wait for any more
		}
		result.sent = count;
		result.checks.seconds = (sendEnd - start) / 1e9;
		return result;
	}

}
