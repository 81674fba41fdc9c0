package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.RedisCommandExecutionException;
import io.netty.channel.EventLoop;

/**
 * The rate limit script calls made on one event loop's thread during one turn of that loop, sent as one script run
 * (the script's {@code 'batch'} operation) at the end of the turn, on the loop's connection; a turn with one call
 * sends it as it is. Each call's future gets its own reply: what the script answers that call alone, or that call's
 * own error reply; a failure of the whole run (Redis unreachable, a timeout) fails every call of it. Other scripts
 * go out at once. At most {@link #MAX_CALLS} calls per run (more make several runs).
 *
 * <p>Thread-safe: a call from another thread joins the batch of the loop's next turn (the first call of a batch wakes
 * the loop).
 */
final class LoopTurnBatch {

	/** Most calls sent in one script run. */
	static final int MAX_CALLS = 64;

	private static final byte[] BATCH = "batch".getBytes(StandardCharsets.US_ASCII);

	private final EventLoop eventLoop;

	private final LettuceScriptConnection connection;

	private final Runnable send = this::send;

	/** The calls of the turn so far; guarded by this batch's monitor. */
	private List<Call> calls = new ArrayList<>();

	/**
	 * @param eventLoop the loop whose turns are batched
	 * @param connection the loop's connection (standalone or Sentinel: a batch's keys span hash slots)
	 */
	LoopTurnBatch(EventLoop eventLoop, LettuceScriptConnection connection) {
		this.eventLoop = eventLoop;
		this.connection = connection;
	}

	/**
	 * Run a script: the shipped rate limit script at the end of this loop turn, in one run with the turn's other
	 * calls; any other script at once.
	 * @param script the script
	 * @param keys its keys, encoded
	 * @param args its arguments, encoded
	 * @return the call's reply, as {@link RedisScriptExecutor#eval} answers it
	 */
	CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
		if (!script.runsBatches()) {
			return this.connection.evalsha(script, keys, args);
		}
		Call call = new Call(script, keys, args);
		boolean first;
		synchronized (this) {
			first = this.calls.isEmpty();
			this.calls.add(call);
		}
		if (first) {
			try {
				this.eventLoop.execute(this.send);
			}
			catch (RuntimeException ex) { // the loop is shutting down: no turn ends, send now
				send();
			}
		}
		return call.reply;
	}

	/** The end of the turn: send what it gathered. */
	private void send() {
		List<Call> sending;
		synchronized (this) {
			sending = this.calls;
			this.calls = new ArrayList<>();
		}
		for (int from = 0; from < sending.size(); from += MAX_CALLS) {
			send(sending.subList(from, Math.min(sending.size(), from + MAX_CALLS)));
		}
	}

	private void send(List<Call> run) {
		if (run.size() == 1) {
			Call call = run.get(0);
			this.connection.evalsha(call.script, call.keys, call.args).whenComplete((reply, error) -> {
				if (error != null) {
					call.reply.completeExceptionally(error);
				}
				else {
					call.reply.complete(reply);
				}
			});
			return;
		}
		int keyCount = 0;
		int argCount = 2 + 2 * run.size();
		for (Call call : run) {
			keyCount += call.keys.length;
			argCount += call.args.length;
		}
		byte[][] keys = new byte[keyCount][];
		byte[][] args = new byte[argCount][];
		args[0] = BATCH;
		args[1] = ascii(run.size());
		int key = 0;
		int arg = 2 + 2 * run.size();
		for (int i = 0; i < run.size(); i++) {
			Call call = run.get(i);
			args[2 + 2 * i] = ascii(call.keys.length);
			args[3 + 2 * i] = ascii(call.args.length);
			System.arraycopy(call.keys, 0, keys, key, call.keys.length);
			System.arraycopy(call.args, 0, args, arg, call.args.length);
			key += call.keys.length;
			arg += call.args.length;
		}
		this.connection.evalsha(run.get(0).script, keys, args).whenComplete((replies, error) -> {
			for (int i = 0; i < run.size(); i++) {
				CompletableFuture<List<Object>> reply = run.get(i).reply;
				if (error != null) {
					reply.completeExceptionally(error);
				}
				else if (replies == null || i >= replies.size()) {
					reply.completeExceptionally(new IllegalStateException("The rate limit script answered "
							+ ((replies != null) ? replies.size() : 0) + " replies to a batch of " + run.size()));
				}
				else {
					complete(reply, replies.get(i));
				}
			}
		});
	}

	@SuppressWarnings("unchecked")
	private static void complete(CompletableFuture<List<Object>> reply, Object element) {
		if (element instanceof List<?> array) {
			reply.complete((List<Object>) array);
		}
		else if (element instanceof Long integer) {
			reply.complete(List.of(integer));
		}
		else if (element instanceof byte[] error) { // that call's error reply, as its message
			reply.completeExceptionally(new RedisCommandExecutionException(new String(error, StandardCharsets.UTF_8)));
		}
		else {
			reply.completeExceptionally(new IllegalStateException("Unexpected reply of the rate limit script: "
					+ element));
		}
	}

	private static byte[] ascii(int number) {
		return Integer.toString(number).getBytes(StandardCharsets.US_ASCII);
	}

	/** One call waiting for the end of the turn. */
	private static final class Call {

		final LuaScript script;

		final byte[][] keys;

		final byte[][] args;

		final CompletableFuture<List<Object>> reply = new CompletableFuture<>();

		Call(LuaScript script, byte[][] keys, byte[][] args) {
			this.script = script;
			this.keys = keys;
			this.args = args;
		}

	}

}
