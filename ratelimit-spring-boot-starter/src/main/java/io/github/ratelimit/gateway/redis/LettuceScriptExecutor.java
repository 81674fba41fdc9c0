package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link RedisScriptExecutor} on a Lettuce connection of its own (what the auto-configuration uses with a
 * {@link LettuceConnectionFactory}: the limiter's own copy of the application's, see
 * {@link LimiterConnectionFactory}): opened from the factory's Lettuce client (so with its address, credentials,
 * TLS, client options and, on a Cluster, its topology), shared by every call with Lettuce's automatic pipelining.
 * Keys and arguments go out as the caller's bytes; a call is one Lettuce future, with no reactive pipeline.
 *
 * <p>Given event loops (the WebFlux server's) and, for each, a factory whose client does its I/O on that loop
 * ({@link LimiterConnectionFactory#onEventLoops}), it also opens one connection per loop: a script run from a loop's
 * thread goes out on that loop's connection, whose answer is read and completed on the same thread, so no other
 * thread is woken on the way. There, the calls of the shipped rate limit script made during one turn of the loop go
 * out as one script run at the end of the turn ({@link LoopTurnBatch}; not on a Cluster, where they would span hash
 * slots). A call from any other thread (Server MVC's, a timer's), or from a loop whose connection
 * is not open yet, goes out on the shared connection.
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

	/** The event loops with connections of their own, and those connections, index for index. */
	private final EventLoop[] eventLoops;

	private final LettuceScriptConnection[] onEventLoops;

	/** Per loop, the batch of its turn's script calls; null on a Cluster (a batch's keys would span slots). */
	private final @Nullable LoopTurnBatch[] batches;

	/** Stopped and started right after the connection factory: its stop shuts the Lettuce client down. */
	private final int phase;

	private volatile boolean running;

	/**
	 * Create an executor and start opening its connection in the background.
	 * @param connectionFactory a Lettuce connection factory (the limiter's own, or the application's), standalone,
	 * Sentinel or Cluster
	 */
	public LettuceScriptExecutor(LettuceConnectionFactory connectionFactory) {
		this(connectionFactory, Map.of());
	}

	/**
	 * Create an executor with a connection per event loop besides the shared one, and start opening them all in the
	 * background.
	 * @param connectionFactory a Lettuce connection factory (the limiter's own, or the application's), standalone,
	 * Sentinel or Cluster: the shared connection's, and the topology's on a Cluster
	 * @param onEventLoops for each event loop, a factory reaching the same Redis whose client does its I/O on that
	 * loop ({@link LimiterConnectionFactory#onEventLoops}); empty for none
	 */
	public LettuceScriptExecutor(LettuceConnectionFactory connectionFactory,
			Map<EventLoop, LettuceConnectionFactory> onEventLoops) {
		this.connection = new LettuceScriptConnection(connectionFactory);
		this.phase = (connectionFactory.getPhase() < Integer.MAX_VALUE) ? connectionFactory.getPhase() + 1
				: Integer.MAX_VALUE;
		this.eventLoops = onEventLoops.keySet().toArray(new EventLoop[0]);
		this.onEventLoops = onEventLoops.values()
			.stream()
			.map(LettuceScriptConnection::new)
			.toArray(LettuceScriptConnection[]::new);
		this.batches = new LoopTurnBatch[this.eventLoops.length];
		for (int i = 0; i < this.eventLoops.length; i++) {
			this.batches[i] = (this.onEventLoops[i].isCluster()) ? null
					: new LoopTurnBatch(this.eventLoops[i], this.onEventLoops[i]);
		}
		allConnections().forEach(LettuceScriptConnection::connectInBackground);
	}

	private List<LettuceScriptConnection> allConnections() {
		List<LettuceScriptConnection> all = new ArrayList<>(this.onEventLoops.length + 1);
		all.add(this.connection);
		all.addAll(List.of(this.onEventLoops));
		return all;
	}

	/**
	 * The event loop the calling thread runs, as an index into {@link #eventLoops}.
	 * @return the index, or -1 when the thread is none of them
	 */
	private int eventLoopOfThisThread() {
		for (int i = 0; i < this.eventLoops.length; i++) {
			if (this.eventLoops[i].inEventLoop()) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * The connection of the calling thread: its event loop's when it has one and it is open, else the shared one (a
	 * loop's connection not open yet is opened in the background meanwhile).
	 */
	private LettuceScriptConnection connectionOfThisThread() {
		int loop = eventLoopOfThisThread();
		if (loop < 0) {
			return this.connection;
		}
		LettuceScriptConnection onLoop = this.onEventLoops[loop];
		if (onLoop.isOpen()) {
			return onLoop;
		}
		onLoop.connectInBackground();
		return this.connection;
	}

	/**
	 * {@inheritDoc}
	 * <p>One EVALSHA (EVAL after NOSCRIPT), completed on the I/O thread of the connection it went out on: the
	 * calling event loop's own (see the class description), else one of Lettuce's; fails with Lettuce's exception
	 * (e.g. {@code RedisCommandTimeoutException} after the client's command timeout).
	 */
	@Override
	public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
		int loop = eventLoopOfThisThread();
		if (loop >= 0) {
			LoopTurnBatch batch = this.batches[loop];
			if (batch != null && this.onEventLoops[loop].isOpen()) {
				return batch.eval(script, keys, args);
			}
		}
		return connectionOfThisThread().evalsha(script, keys, args);
	}

	@Override
	public CompletableFuture<Long> delete(byte[][] keys) {
		return connectionOfThisThread().del(keys);
	}

	@Override
	public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
		return connectionOfThisThread().zrem(key, member);
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
	 * <p>As Lettuce reports it for the factories' clients (every connection of those clients: the limiter's, and
	 * those of the limiter's other Redis users through the same factory); on a Cluster, the node's {@code host:port}.
	 */
	@Override
	public AutoCloseable onConnected(Consumer<String> listener) {
		List<AutoCloseable> listening = new ArrayList<>();
		for (LettuceScriptConnection each : allConnections()) {
			listening.add(each.onConnected(listener));
		}
		return () -> {
			for (AutoCloseable each : listening) {
				each.close();
			}
		};
	}

	/** Open the connections again (in the background) after {@link #stop()}, from the factories' current clients. */
	@Override
	public void start() {
		this.running = true;
		allConnections().forEach(LettuceScriptConnection::connectInBackground);
	}

	/** Close the connections for now (never waits for a connect in progress); {@link #start()} opens new ones. */
	@Override
	public void stop() {
		this.running = false;
		allConnections().forEach(LettuceScriptConnection::suspend);
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

	/** Close the connections for good; later calls fail. Never waits for a connect in progress. */
	@Override
	public void close() {
		allConnections().forEach(LettuceScriptConnection::close);
	}

	@Override
	public String toString() {
		return "LettuceScriptExecutor";
	}

}
