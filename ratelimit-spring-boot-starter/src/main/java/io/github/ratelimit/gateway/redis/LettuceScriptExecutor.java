package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link RedisScriptExecutor} on a Lettuce connection of its own (what the auto-configuration uses with a
 * {@link LettuceConnectionFactory}: the limiter's own copy of the application's, see
 * {@link LimiterConnectionFactory}): opened from the factory's Lettuce client (so with its address, credentials,
 * TLS, client options and, on a Cluster, its topology), on which Lettuce pipelines concurrent calls.
 * Keys and arguments go out as the caller's bytes; a call is one Lettuce future, with no reactive pipeline.
 *
 * <p>Given event loops (the WebFlux server's) and, for each, a factory whose client does its I/O on that loop
 * ({@link LimiterConnectionFactory#onEventLoops}), it also opens one connection per loop: a script run from a loop's
 * thread goes out on that loop's connection, whose answer is read and completed on the same thread, so no other
 * thread is woken on the way. There, the calls of the shipped rate limit script made during one turn of the loop go
 * out as one script run at the end of the turn ({@link LoopTurnBatch}; not on a Cluster, where they would span hash
 * slots). Calls from any other thread (Server MVC's request threads, a timer's) go out on the connection of the loop
 * named for other threads, batched the same way (the first call of a batch wakes that loop), or, without such a
 * loop, alone on the shared connection; so does a call whose loop connection is not open yet.
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

	/** Longest {@link #stop()} waits for its connections to close. */
	static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

	private final LettuceScriptConnection connection;

	/** Asked for the loops' factories at creation and at every {@link #start()}. */
	private final Supplier<Map<EventLoop, LettuceConnectionFactory>> onEventLoops;

	private final @Nullable EventLoop forOtherThreads;

	/** Where each thread's calls go out; replaced by {@link #start()} when the loops changed. */
	private volatile Routing routing;

	/** The listeners of {@link #onConnected}, told by every connection: those a {@link #start()} makes too. */
	private final List<Consumer<String>> connectedListeners = new CopyOnWriteArrayList<>();

	/** Stopped and started right after the connection factory: its stop shuts the Lettuce client down. */
	private final int phase;

	private volatile boolean running;

	/**
	 * Create an executor and start opening its connection in the background.
	 * @param connectionFactory a Lettuce connection factory (the limiter's own, or the application's), standalone,
	 * Sentinel or Cluster
	 */
	public LettuceScriptExecutor(LettuceConnectionFactory connectionFactory) {
		this(connectionFactory, Map::of, null);
	}

	/**
	 * Create an executor with a connection per event loop besides the shared one, and start opening them all in the
	 * background.
	 * @param connectionFactory a Lettuce connection factory (the limiter's own, or the application's), standalone,
	 * Sentinel or Cluster: the shared connection's, and the topology's on a Cluster
	 * @param onEventLoops for each event loop, a factory reaching the same Redis whose client does its I/O on that
	 * loop ({@link LimiterConnectionFactory#onEventLoops}), empty for none; asked now and again at every
	 * {@link #start()} (a server stopped and started again may run on new loops): a loop no longer answered loses its
	 * connection, a new one gets one
	 * @param forOtherThreads the loop among {@code onEventLoops} whose connection takes the calls of every thread
	 * that is none of the loops (in batches: {@link LimiterConnectionFactory#clientEventLoop()}); {@code null}, or a
	 * loop not answered: those calls go out alone on the shared connection
	 */
	public LettuceScriptExecutor(LettuceConnectionFactory connectionFactory,
			Supplier<Map<EventLoop, LettuceConnectionFactory>> onEventLoops, @Nullable EventLoop forOtherThreads) {
		this.connection = new LettuceScriptConnection(connectionFactory);
		this.phase = (connectionFactory.getPhase() < Integer.MAX_VALUE) ? connectionFactory.getPhase() + 1
				: Integer.MAX_VALUE;
		this.onEventLoops = onEventLoops;
		this.forOtherThreads = forOtherThreads;
		this.routing = new Routing(onEventLoops.get(), forOtherThreads, Routing.NONE);
		allConnections().forEach(this::reportConnects);
		allConnections().forEach(LettuceScriptConnection::connectInBackground);
	}

	private List<LettuceScriptConnection> allConnections() {
		Routing current = this.routing;
		List<LettuceScriptConnection> all = new ArrayList<>(current.connections.length + 1);
		all.add(this.connection);
		all.addAll(List.of(current.connections));
		return all;
	}

	/**
	 * {@inheritDoc}
	 * <p>One EVALSHA (EVAL after NOSCRIPT), or a share of one when batched (see the class description), completed on
	 * the I/O thread of the connection it went out on; fails with Lettuce's exception (e.g.
	 * {@code RedisCommandTimeoutException} after the client's command timeout).
	 */
	@Override
	public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
		Routing current = this.routing;
		int loop = current.eventLoopForThisThread();
		if (!current.isOpen(loop)) {
			return this.connection.evalsha(script, keys, args);
		}
		LoopTurnBatch batch = current.batches[loop];
		return (batch != null) ? batch.eval(script, keys, args) : current.connections[loop].evalsha(script, keys, args);
	}

	/**
	 * {@inheritDoc}
	 * <p>On the calling thread's connection (see the class description), at once: ahead of that loop's script calls
	 * of the same turn, which wait for the end of the turn. The same holds for {@link #removeFromSortedSet}.
	 */
	@Override
	public CompletableFuture<Long> delete(byte[][] keys) {
		return connectionOfThisThread().del(keys);
	}

	@Override
	public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
		return connectionOfThisThread().zrem(key, member);
	}

	/**
	 * The connection of the calling thread: its loop's when open (see {@link Routing#eventLoopForThisThread()}), else
	 * the shared one.
	 */
	private LettuceScriptConnection connectionOfThisThread() {
		Routing current = this.routing;
		int loop = current.eventLoopForThisThread();
		return current.isOpen(loop) ? current.connections[loop] : this.connection;
	}

	/** {@inheritDoc} <p>{@code TIME} on the shared connection (on a Cluster, to the named master). */
	@Override
	public CompletableFuture<Long> time(String shard) {
		return this.connection.time(shard);
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
	 * <p>Whether any of its connections (the shared one, or one of a loop) is connected to the shard now.
	 */
	@Override
	public boolean connectedTo(String shard) {
		if (this.connection.connectedTo(shard)) {
			return true;
		}
		for (LettuceScriptConnection onLoop : this.routing.connections) {
			if (onLoop.connectedTo(shard)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * {@inheritDoc}
	 * <p>As Lettuce reports it for the factories' clients (every connection of those clients: the limiter's, and
	 * those of the limiter's other Redis users through the same factory); on a Cluster, the node's {@code host:port}.
	 */
	@Override
	public AutoCloseable onConnected(Consumer<String> listener) {
		this.connectedListeners.add(listener);
		return () -> this.connectedListeners.remove(listener);
	}

	/** Has a connection tell {@link #connectedListeners} of its client's connects, from its creation on. */
	private void reportConnects(LettuceScriptConnection connection) {
		connection.onConnected((shard) -> {
			for (Consumer<String> listener : this.connectedListeners) {
				try {
					listener.accept(shard);
				}
				catch (RuntimeException ex) {
					// a listener's failure must not keep the others from being told
				}
			}
		});
	}

	/**
	 * Open the connections again (in the background) after {@link #stop()}, from the factories' current clients: a
	 * connection per loop the factories are now given for (closing for good those of loops that are gone).
	 */
	@Override
	public void start() {
		this.running = true;
		Routing before = this.routing;
		Map<EventLoop, LettuceConnectionFactory> now = this.onEventLoops.get();
		if (!before.isFor(now)) {
			Routing after = new Routing(now, this.forOtherThreads, before);
			after.connectionsNotIn(before).forEach(this::reportConnects);
			this.routing = after;
			before.connectionsNotIn(after).forEach(LettuceScriptConnection::close);
		}
		allConnections().forEach(LettuceScriptConnection::resume);
	}

	/**
	 * Close the connections for now, waiting up to {@link #CLOSE_WAIT} for them to close (so that the client's
	 * shutdown, next, does not close them again); never waits for a connect in progress. {@link #start()} opens new
	 * ones.
	 */
	@Override
	public void stop() {
		this.running = false;
		CompletableFuture<?>[] closing = allConnections().stream()
			.map(LettuceScriptConnection::suspend)
			.toArray(CompletableFuture<?>[]::new);
		try {
			CompletableFuture.allOf(closing).get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// closed with an error, or not within the wait: the client's shutdown closes what is left
		}
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

	/**
	 * The event loops with connections of their own, those connections and their batches, index for index; the
	 * connection of a loop whose factory is unchanged carries over from the routing before.
	 */
	private static final class Routing {

		static final Routing NONE = new Routing(Map.of(), null, null);

		final EventLoop[] eventLoops;

		final LettuceScriptConnection[] connections;

		/** Per loop, the batch of its turn's script calls; null on a Cluster (a batch's keys would span slots). */
		final @Nullable LoopTurnBatch[] batches;

		/** Index of the loop whose connection takes the calls of other threads, -1 for the shared connection. */
		final int forOtherThreads;

		private final Map<EventLoop, LettuceConnectionFactory> factories;

		Routing(Map<EventLoop, LettuceConnectionFactory> factories, @Nullable EventLoop forOtherThreads,
				@Nullable Routing before) {
			this.factories = Map.copyOf(factories);
			int size = factories.size();
			this.eventLoops = new EventLoop[size];
			this.connections = new LettuceScriptConnection[size];
			this.batches = new LoopTurnBatch[size];
			int other = -1;
			int i = 0;
			for (Map.Entry<EventLoop, LettuceConnectionFactory> entry : factories.entrySet()) {
				EventLoop loop = entry.getKey();
				int kept = (before != null) ? before.indexOf(loop, entry.getValue()) : -1;
				this.eventLoops[i] = loop;
				if (kept >= 0 && before != null) {
					this.connections[i] = before.connections[kept];
					this.batches[i] = before.batches[kept];
				}
				else {
					this.connections[i] = new LettuceScriptConnection(entry.getValue());
					this.batches[i] = (this.connections[i].isCluster()) ? null
							: new LoopTurnBatch(loop, this.connections[i]);
				}
				if (loop == forOtherThreads) {
					other = i;
				}
				i++;
			}
			this.forOtherThreads = other;
		}

		boolean isFor(Map<EventLoop, LettuceConnectionFactory> factories) {
			return this.factories.equals(factories);
		}

		private int indexOf(EventLoop loop, LettuceConnectionFactory factory) {
			for (int i = 0; i < this.eventLoops.length; i++) {
				if (this.eventLoops[i] == loop && this.factories.get(loop) == factory) {
					return i;
				}
			}
			return -1;
		}

		List<LettuceScriptConnection> connectionsNotIn(Routing other) {
			List<LettuceScriptConnection> gone = new ArrayList<>(List.of(this.connections));
			gone.removeAll(List.of(other.connections));
			return gone;
		}

		/**
		 * The loop whose connection the calling thread's calls go out on: the loop the thread runs, else the loop for
		 * other threads.
		 * @return the index into {@link #eventLoops}, or -1 for the shared connection
		 */
		int eventLoopForThisThread() {
			for (int i = 0; i < this.eventLoops.length; i++) {
				if (this.eventLoops[i].inEventLoop()) {
					return i;
				}
			}
			return this.forOtherThreads;
		}

		/**
		 * Whether a loop's connection is open; if not, it is opened in the background meanwhile.
		 * @param loop index into {@link #eventLoops}, or -1
		 * @return whether calls can go out on the loop's connection
		 */
		boolean isOpen(int loop) {
			if (loop < 0) {
				return false;
			}
			LettuceScriptConnection onLoop = this.connections[loop];
			if (onLoop.isOpen()) {
				return true;
			}
			onLoop.connectInBackground();
			return false;
		}

	}

}
