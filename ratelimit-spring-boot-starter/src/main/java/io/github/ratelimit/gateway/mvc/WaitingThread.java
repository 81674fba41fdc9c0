package io.github.ratelimit.gateway.mvc;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The thread of one Server MVC request as an {@link Executor}: tasks handed to it while the thread waits for a future
 * ({@link #await}) run on that thread; once it has given up waiting, they run at once on the thread that hands them
 * over. One instance per request.
 */
final class WaitingThread implements Executor {

	private static final Runnable WAKE_UP = () -> {
	};

	private final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

	private volatile boolean gaveUp;

	@Override
	public void execute(Runnable task) {
		this.tasks.add(task);
		if (this.gaveUp) {
			runQueued();
		}
	}

	/**
	 * Wait for a future, running the tasks handed over meanwhile. When the wait ends without an answer (timeout,
	 * interrupt) the future is cancelled first, then the tasks still queued run.
	 * @param <T> the answer's type
	 * @param future the future, completed by the tasks or elsewhere
	 * @param timeout the longest wait
	 * @param unit the unit of {@code timeout}
	 * @return the answer
	 * @throws ExecutionException when the future completed exceptionally
	 * @throws InterruptedException when the thread was interrupted (the future is cancelled)
	 * @throws TimeoutException when no answer came in time (the future is cancelled)
	 */
	<T> T await(CompletableFuture<T> future, long timeout, TimeUnit unit)
			throws ExecutionException, InterruptedException, TimeoutException {
		long deadline = System.nanoTime() + unit.toNanos(timeout);
		future.whenComplete((answer, error) -> this.tasks.add(WAKE_UP));
		boolean answered = false;
		try {
			while (!future.isDone()) {
				Runnable task = this.tasks.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
				if (task == null) {
					throw new TimeoutException("No answer within " + timeout + " " + unit);
				}
				task.run();
			}
			answered = true;
		}
		finally {
			if (!answered) {
				future.cancel(false);
				this.gaveUp = true;
				runQueued();
			}
		}
		return future.get();
	}

	private void runQueued() {
		for (Runnable task; (task = this.tasks.poll()) != null;) {
			task.run();
		}
	}

}
