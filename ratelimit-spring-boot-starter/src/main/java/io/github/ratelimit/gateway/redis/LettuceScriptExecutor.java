package io.github.ratelimit.gateway.redis;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link RedisScriptExecutor} on a Lettuce connection of its own (what the auto-configuration uses with a
 * {@link LettuceConnectionFactory}: the limiter's own copy of the application's, see
 * {@link LimiterConnectionFactory}): opened from the factory's Lettuce client (so with its address, credentials,
 * TLS, client options and, on a Cluster, its topology), shared by every call with Lettuce's automatic pipelining.
 * Keys and arguments go out as the caller's bytes; a call is one Lettuce future, with no reactive pipeline.
 *
 * <p>The connection is opened in the background at creation (and, if Redis is down then, by the first call after it
 * is up; never on the caller's thread): a call made meanwhile waits for that attempt and fails with its error if it
 * fails. Once open, Lettuce reconnects by itself.
 *
 * <p>As a {@link SmartLifecycle} it stops right before the connection factory (whose stop shuts the Lettuce client
 * down, closing every connection for good) by closing its connection, and starts right after it by opening a new
 * one from the factory's new client (a paused test context, a checkpoint and restore). {@link #close()} closes it
 * for good.
 */
public final class LettuceScriptExecutor implements RedisScriptExecutor, SmartLifecycle {

	private final LettuceScriptConnection connection;

	/** Stopped and started right after the connection factory: its stop shuts the Lettuce client down. */
	private final int phase;

	private volatile boolean running;

	/**
	 * Create an executor and start opening its connection in the background.
	 * @param connectionFactory a Lettuce connection factory (the limiter's own, or the application's), standalone,
	 * Sentinel or Cluster
	 */
	public LettuceScriptExecutor(LettuceConnectionFactory connectionFactory) {
		this.connection = new LettuceScriptConnection(connectionFactory);
		this.phase = (connectionFactory.getPhase() < Integer.MAX_VALUE) ? connectionFactory.getPhase() + 1
				: Integer.MAX_VALUE;
		this.connection.connectInBackground();
	}

	/**
	 * {@inheritDoc}
	 * <p>One EVALSHA (EVAL after NOSCRIPT), completed on Lettuce's I/O thread; fails with Lettuce's exception (e.g.
	 * {@code RedisCommandTimeoutException} after the client's command timeout).
	 */
	@Override
	public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
		return this.connection.evalsha(script, keys, args);
	}

	@Override
	public CompletableFuture<Long> delete(byte[][] keys) {
		return this.connection.del(keys);
	}

	@Override
	public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
		return this.connection.zrem(key, member);
	}

	/** On a Redis Cluster: the masters, as the connection's view of the topology (Lettuce's refresh) has them. */
	@Override
	public boolean isSharded() {
		return this.connection.isCluster();
	}

	@Override
	public String shardOf(byte[] key) {
		return this.connection.shardOf(key);
	}

	@Override
	public Set<String> shards() {
		return this.connection.shards();
	}

	/**
	 * {@inheritDoc}
	 * <p>As Lettuce reports it for the factory's client (every connection of that client: the limiter's, and those
	 * of the limiter's other Redis users through the same factory); on a Cluster, the node's {@code host:port}.
	 */
	@Override
	public AutoCloseable onConnected(Consumer<String> listener) {
		return this.connection.onConnected(listener);
	}

	/** Open the connection again (in the background) after {@link #stop()}, from the factory's current client. */
	@Override
	public void start() {
		this.running = true;
		this.connection.connectInBackground();
	}

	/** Close the connection for now (never waits for a connect in progress); {@link #start()} opens a new one. */
	@Override
	public void stop() {
		this.running = false;
		this.connection.suspend();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * One after the connection factory's phase.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return this.phase;
	}

	/** Close the connection for good; later calls fail. Never waits for a connect in progress. */
	@Override
	public void close() {
		this.connection.close();
	}

	@Override
	public String toString() {
		return "LettuceScriptExecutor";
	}

}
