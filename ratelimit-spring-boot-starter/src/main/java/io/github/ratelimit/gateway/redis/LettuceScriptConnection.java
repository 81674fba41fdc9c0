package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The rate limiter's own Lettuce connection (bytes in, bytes out), opened from a {@link LettuceConnectionFactory}'s
 * native client: standalone, Sentinel-managed or Cluster, with the client's URI, credentials, TLS and client
 * options (so {@code REJECT_COMMANDS} while disconnected and Cluster topology refresh apply here too). Every check
 * shares it; Lettuce pipelines the commands of concurrent checks on it.
 *
 * <p>Opening it blocks (Lettuce connects synchronously), so it is opened on Reactor's bounded elastic scheduler at
 * start-up and, if that failed, on first use, never on the caller's thread; calls made meanwhile wait for that attempt (their caller's timeout bounds
 * the wait) and fail with its error if it fails; the next call then starts a new attempt. Once open, Lettuce
 * reconnects by itself.
 */
final class LettuceScriptConnection implements AutoCloseable {

	/** Longest a connect attempt is waited for before the next check starts another one. */
	static final Duration CONNECT_ATTEMPT_LIMIT = Duration.ofSeconds(30);

	private final LettuceConnectionFactory connectionFactory;

	private final AtomicReference<CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>>> attempt = new AtomicReference<>();

	private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;

	private volatile StatefulConnection<byte[], byte[]> connection;

	private volatile boolean closed;

	/** Counts {@link #suspend()} calls: a connection opened from a client that was shut down meanwhile is dropped. */
	private int generation;

	LettuceScriptConnection(LettuceConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Run a script with EVALSHA, and with EVAL (which also loads it) if the node answers NOSCRIPT.
	 * @param script the script
	 * @param keys the keys, encoded
	 * @param args the arguments, encoded
	 * @return the script's reply (integers as {@link Long}); completed exceptionally with Lettuce's exception
	 */
	CompletableFuture<List<Object>> evalsha(LuaScript script, byte[][] keys, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> open = this.commands;
		if (open != null) {
			return evalsha(open, script, keys, args);
		}
		return connect().thenCompose((connected) -> evalsha(connected, script, keys, args));
	}

	/**
	 * Delete keys (all in one hash slot on a Cluster).
	 * @param keys the keys, encoded
	 * @return the number of keys that existed
	 */
	CompletableFuture<Long> del(byte[][] keys) {
		RedisClusterAsyncCommands<byte[], byte[]> open = this.commands;
		if (open != null) {
			return open.del(keys).toCompletableFuture();
		}
		return connect().thenCompose((connected) -> connected.del(keys).toCompletableFuture());
	}

	private CompletableFuture<List<Object>> evalsha(RedisClusterAsyncCommands<byte[], byte[]> redis,
			LuaScript script, byte[][] keys, byte[][] args) {
		CompletableFuture<List<Object>> sent = redis.<List<Object>>evalsha(script.sha1(), ScriptOutputType.MULTI,
				keys, args)
			.toCompletableFuture();
		return sent.exceptionallyCompose((ex) -> {
			if (unwrap(ex) instanceof RedisNoScriptException) {
				return redis.<List<Object>>eval(script.utf8(), ScriptOutputType.MULTI, keys, args).toCompletableFuture();
			}
			return sent;
		});
	}

	/**
	 * Start opening the connection now, in the background (at start-up, so the first checks find it open instead of
	 * spending their timeout on the connect). A failure is left for the next check to retry.
	 */
	void connectInBackground() {
		connect();
	}

	private CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> connect() {
		while (true) {
			CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> current = this.attempt.get();
			if (current != null && !current.isCompletedExceptionally()) {
				return current;
			}
			// an attempt that has not finished within CONNECT_ATTEMPT_LIMIT counts as failed (Lettuce's own connect
			// timeout normally ends it first), so a hung connect never keeps every later check waiting
			CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> next = new CompletableFuture<>();
			next.orTimeout(CONNECT_ATTEMPT_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
			if (this.attempt.compareAndSet(current, next)) {
				try {
					Schedulers.boundedElastic().schedule(() -> {
						try {
							next.complete(open());
						}
						catch (Throwable ex) {
							next.completeExceptionally(ex);
						}
					});
				}
				catch (RuntimeException ex) { // the scheduler is shutting down
					next.completeExceptionally(ex);
				}
				return next;
			}
		}
	}

	/**
	 * Open the connection (blocking; runs on the bounded elastic scheduler). No lock is held while Lettuce connects,
	 * so {@link #close()} never waits for a connect in progress; a connection that opens after {@link #close()} is
	 * closed at once.
	 */
	private RedisClusterAsyncCommands<byte[], byte[]> open() {
		if (this.closed) {
			throw new IllegalStateException("The rate limiter's Redis connection is closed");
		}
		RedisClusterAsyncCommands<byte[], byte[]> open = this.commands;
		if (open != null) {
			return open;
		}
		int openedIn;
		synchronized (this) {
			openedIn = this.generation;
		}
		AbstractRedisClient client = this.connectionFactory.getRequiredNativeClient();
		StatefulConnection<byte[], byte[]> opened;
		RedisClusterAsyncCommands<byte[], byte[]> async;
		if (client instanceof RedisClusterClient cluster) {
			StatefulRedisClusterConnection<byte[], byte[]> connection = cluster.connect(ByteArrayCodec.INSTANCE);
			opened = connection;
			async = connection.async();
		}
		else if (client instanceof RedisClient standalone) {
			StatefulRedisConnection<byte[], byte[]> connection = standalone.connect(ByteArrayCodec.INSTANCE);
			opened = connection;
			async = connection.async();
		}
		else {
			throw new IllegalStateException("Unsupported Lettuce client " + client.getClass().getName());
		}
		synchronized (this) {
			if (this.generation != openedIn) { // suspended meanwhile: this client is being shut down
				opened.closeAsync();
				throw new IllegalStateException("The rate limiter's Redis connection was suspended while opening");
			}
			if (!this.closed && this.commands == null) {
				this.connection = opened;
				this.commands = async;
				return async;
			}
			if (!this.closed) { // an attempt given up on (see connect()) came back after a newer one succeeded
				opened.closeAsync();
				return this.commands;
			}
		}
		opened.closeAsync();
		throw new IllegalStateException("The rate limiter's Redis connection is closed");
	}

	/**
	 * Close the connection for now, e.g. because the connection factory is about to shut its client down; the next
	 * call or {@link #connectInBackground()} opens a new one from the factory's (new) client. Never waits for a
	 * connect in progress.
	 */
	void suspend() {
		StatefulConnection<byte[], byte[]> open;
		synchronized (this) {
			open = this.connection;
			this.connection = null;
			this.commands = null;
			this.attempt.set(null);
			this.generation++;
		}
		if (open != null) {
			open.closeAsync();
		}
	}

	/** Close the connection; later calls fail. Never waits for a connect in progress. */
	@Override
	public void close() {
		this.closed = true;
		suspend();
	}

	private static Throwable unwrap(Throwable ex) {
		Throwable cause = ex;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

}
