package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.protocol.RedisCommand;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.ThreadExecutorMap;

/**
 * Sends the commands that one Netty event loop thread issues during one turn of its loop (e.g. the checks of every
 * request read in that turn) to Redis together: one dispatch of the whole batch, so Lettuce flushes once and the
 * kernel sends them in one {@code write} system call, and Redis reads them in one go, instead of one write, one
 * flush and one read each. The batch goes out at the end of the turn, as a task the thread queues on its own loop
 * with the first command of the batch, so a command waits at most for the rest of that turn (microseconds), never
 * for a timer.
 *
 * <p>A command issued on any other thread (a test's, a timer's, a blocking caller's) is dispatched at once, as
 * Lettuce's async API does. Lettuce's own {@code setAutoFlushCommands(false)} and {@code flushCommands()} are not
 * used: they switch the whole shared connection, so one thread's batch would hold back the commands of every other
 * thread. Each thread's batch here is its own (a {@link FastThreadLocal}), handed over to Lettuce whole with
 * {@code StatefulConnection.dispatch(Collection)}, which is safe from any thread.
 *
 * <p>For a standalone or Sentinel-managed connection only: a Cluster connection dispatches a batch by looking its
 * nodes' connections up synchronously, which may block the event loop while a node connects.
 */
final class CoalescingDispatcher {

	private final FastThreadLocal<Batch> batches = new FastThreadLocal<>();

	/**
	 * Dispatch a command on a connection: at the end of the current turn of the caller's event loop, with the other
	 * commands that loop issues in that turn, or at once on a thread of no event loop.
	 * @param connection where the command goes
	 * @param command the command (an {@code AsyncCommand}, completed by Lettuce)
	 */
	void dispatch(StatefulRedisConnection<byte[], byte[]> connection, RedisCommand<byte[], byte[], ?> command) {
		EventExecutor loop = ThreadExecutorMap.currentExecutor();
		if (loop == null || !loop.inEventLoop()) {
			connection.dispatch(command);
			return;
		}
		Batch batch = this.batches.get();
		if (batch == null || batch.loop != loop) {
			batch = new Batch(loop);
			this.batches.set(batch);
		}
		batch.add(connection, command);
	}

	/** The commands one event loop thread issued in the current turn; only ever touched by that thread. */
	private static final class Batch implements Runnable {

		private final EventExecutor loop;

		private List<RedisCommand<byte[], byte[], ?>> commands = new ArrayList<>();

		private StatefulRedisConnection<byte[], byte[]> connection;

		Batch(EventExecutor loop) {
			this.loop = loop;
		}

		void add(StatefulRedisConnection<byte[], byte[]> target, RedisCommand<byte[], byte[], ?> command) {
			if (target != this.connection && !this.commands.isEmpty()) {
				run(); // the connection was reopened within the turn: what was queued goes to the one it was for
			}
			this.connection = target;
			this.commands.add(command);
			if (this.commands.size() == 1) {
				try {
					this.loop.execute(this);
				}
				catch (RejectedExecutionException ex) { // the loop is shutting down
					run();
				}
			}
		}

		/** Send the batch (the end of the turn). */
		@Override
		public void run() {
			List<RedisCommand<byte[], byte[], ?>> sending = this.commands;
			if (sending.isEmpty()) {
				return;
			}
			// a fresh list first: a command completed while dispatching (e.g. rejected while disconnected) may run
			// callbacks on this thread that issue the next command of this loop
			this.commands = new ArrayList<>(Math.max(4, sending.size()));
			StatefulRedisConnection<byte[], byte[]> target = this.connection;
			try {
				if (sending.size() == 1) {
					target.dispatch(sending.get(0));
				}
				else {
					target.dispatch(sending);
				}
			}
			catch (RuntimeException ex) { // Lettuce completes failures itself; anything else must not strand a check
				for (RedisCommand<byte[], byte[], ?> command : sending) {
					command.completeExceptionally(ex);
				}
			}
		}

	}

}
