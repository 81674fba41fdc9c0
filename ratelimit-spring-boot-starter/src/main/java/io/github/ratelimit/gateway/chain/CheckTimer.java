package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timer;

/** The timer wheel that times the chain's pending calls out. */
final class CheckTimer {

	private CheckTimer() {
	}

	/**
	 * One timer wheel for every pending call of a layer (Netty's {@link HashedWheelTimer}: adding and cancelling a
	 * timeout is O(1), no scheduler queue per call), ticking every 1/20 of the timeout (1 ms to 10 ms), so a timeout
	 * fires within one tick after it is due. Expired calls are finished on the common fork-join pool, not on the
	 * timer's thread.
	 * @param timeout the timeout the wheel serves
	 * @param threadName the name of the timer's (daemon) thread
	 * @return a started timer; {@link Timer#stop()} ends its thread
	 */
	static Timer newTimer(Duration timeout, String threadName) {
		long tickNanos = Math.max(1_000_000L, Math.min(10_000_000L, timeout.toNanos() / 20));
		ThreadFactory threads = (runnable) -> {
			Thread thread = new Thread(runnable, threadName);
			thread.setDaemon(true);
			return thread;
		};
		Executor finish = ForkJoinPool.commonPool();
		return new HashedWheelTimer(threads, tickNanos, TimeUnit.NANOSECONDS, 512, true, -1, finish);
	}

}
