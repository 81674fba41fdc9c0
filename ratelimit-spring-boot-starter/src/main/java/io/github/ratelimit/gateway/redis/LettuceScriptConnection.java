package io.github.ratelimit.gateway.redis;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The rate limiter's own Lettuce connection (bytes in, bytes out), opened from a {@link LettuceConnectionFactory}'s
 * native client: standalone, Sentinel-managed or Cluster, with the client's URI, credentials, TLS and client
 * options (the auto-configuration's factory is the limiter's own, {@link LimiterConnectionFactory}). Every check
 * shares it; Lettuce pipelines the commands of concurrent checks on it.
 *
 * <p>Opening it blocks (Lettuce connects synchronously), so it is opened on a connect thread (daemon threads named
 * {@code ratelimit-redis-connect}, ended after 60 s idle) at start-up and, if that failed, on first use, never on
 * the caller's thread; calls made meanwhile wait for that attempt (their caller's timeout bounds the wait) and fail
 * with its error if it fails; the next call then starts a new attempt. Once open, Lettuce reconnects by itself.
 *
 * <p>Whoever asked ({@link #onConnected}) is told each time Lettuce has established a connection of the factory's
 * client (Lettuce's {@link RedisConnectionStateListener}, registered on each client the connection is opened from),
 * with the shard it leads to.
 */
final class LettuceScriptConnection implements AutoCloseable {

	/** Longest a connect attempt is waited for before the next check starts another one. */
	static final Duration CONNECT_ATTEMPT_LIMIT = Duration.ofSeconds(30);

	/** Runs the blocking connects: daemon threads, one per connect in progress, ended after 60 s idle. */
	private static final ExecutorService CONNECTS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
			new SynchronousQueue<>(), (task) -> {
				Thread thread = new Thread(task, "ratelimit-redis-connect");
				thread.setDaemon(true);
				return thread;
			});

	private final LettuceConnectionFactory connectionFactory;

	private final boolean cluster;

	private final AtomicReference<CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>>> attempt = new AtomicReference<>();

	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

	private volatile @Nullable StatefulConnection<byte[], byte[]> connection;

	/** The Cluster's slot map as Lettuce keeps it (updated in place by topology refresh); null unless a Cluster. */
	private volatile @Nullable Partitions partitions;

	/** {@code host:port} of the Cluster nodes seen, so naming a check's shard allocates nothing. */
	private final Map<RedisURI, String> nodeNames = new ConcurrentHashMap<>();

	private volatile boolean closed;

	/** Between {@link #suspend()} and {@link #resume()}: calls fail at once instead of opening a connection. */
	private volatile boolean suspended;

	/** The connect in progress on a connect thread, cancelled (interrupted) by {@link #suspend()}. */
	private volatile @Nullable Future<?> connecting;

	/** Told of every connection established by the client (see {@link #onConnected}). */
	private final List<Consumer<String>> connectedListeners = new CopyOnWriteArrayList<>();

	/** Lettuce's listener, on the clients it was added to (one at a time; a new one after stop and start). */
	private final RedisConnectionStateListener connectionEvents = new RedisConnectionStateListener() {

		@Override
		public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress remote) {
			connected(remote);
		}

	};

	/** The client {@link #connectionEvents} was last added to. */
	private @Nullable AbstractRedisClient listenedTo;

	/** Counts {@link #suspend()} calls: a connection opened from a client that was shut down meanwhile is dropped. */
	private int generation;

	LettuceScriptConnection(LettuceConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
		this.cluster = connectionFactory.isClusterAware();
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
	 * Whether the connection has been opened (Lettuce may be reconnecting it) and not suspended or closed since.
	 * @return whether calls go out on it without waiting for a connect
	 */
	boolean isOpen() {
		return this.commands != null;
	}

	/**
	 * The Cluster master serving the slot of a key, as Lettuce's topology knows it now.
	 * @param key the key, or its start through its hash tag, encoded (Lettuce's {@link SlotHash}, as Redis hashes)
	 * @return the master's {@code host:port}; {@link StoreShards#SINGLE_SHARD} when Redis is not a Cluster, the
	 * connection is not open yet, or no node serves the slot
	 */
	String shardOf(byte[] key) {
		Partitions slots = this.partitions;
		if (slots == null) {
			return StoreShards.SINGLE_SHARD;
		}
		RedisClusterNode master = slots.getMasterBySlot(SlotHash.getSlot(key));
		return (master != null) ? name(master) : StoreShards.SINGLE_SHARD;
	}

	/**
	 * The Cluster masters serving slots now.
	 * @return their {@code host:port}; {@code {SINGLE_SHARD}} when Redis is not a Cluster or the connection is not
	 * open yet
	 */
	Set<String> shards() {
		Partitions slots = this.partitions;
		if (slots == null) {
			return Set.of(StoreShards.SINGLE_SHARD);
		}
		Set<String> masters = new TreeSet<>();
		for (RedisClusterNode node : slots) {
			if (node.getRole().isUpstream() && !node.getSlots().isEmpty()) {
				masters.add(name(node));
			}
		}
		return masters.isEmpty() ? Set.of(StoreShards.SINGLE_SHARD) : masters;
	}

	/**
	 * Whether this is a Cluster connection (shards known once the connection is open).
	 * @return whether the factory's client is a Cluster client
	 */
	boolean isCluster() {
		return this.cluster;
	}

	private String name(RedisClusterNode node) {
		RedisURI uri = node.getUri();
		String name = this.nodeNames.get(uri);
		return (name != null) ? name : this.nodeNames.computeIfAbsent(uri, (u) -> (u.getHost().indexOf(':') >= 0)
				? "[" + u.getHost() + "]:" + u.getPort() : u.getHost() + ":" + u.getPort());
	}

	/**
	 * Be told each time the client establishes a connection (see the class comment).
	 * @param listener called with the shard's name: {@link StoreShards#SINGLE_SHARD}, or on a Cluster the node's
	 * {@code host:port} as {@link #shardOf} names it; on Lettuce's I/O thread
	 * @return closing it stops the calls
	 */
	AutoCloseable onConnected(Consumer<String> listener) {
		this.connectedListeners.add(listener);
		listenTo(this.connectionFactory.getNativeClient());
		return () -> this.connectedListeners.remove(listener);
	}

	private void listenTo(@Nullable AbstractRedisClient client) {
		if (client == null || this.connectedListeners.isEmpty()) {
			return;
		}
		synchronized (this) {
			if (this.listenedTo == client) {
				return;
			}
			if (this.listenedTo != null) {
				this.listenedTo.removeListener(this.connectionEvents);
			}
			client.addListener(this.connectionEvents);
			this.listenedTo = client;
		}
	}

	private void connected(SocketAddress remote) {
		if (this.connectedListeners.isEmpty()) {
			return;
		}
		String shard = (this.cluster) ? shardAt(remote) : StoreShards.SINGLE_SHARD;
		for (Consumer<String> listener : this.connectedListeners) {
			try {
				listener.accept(shard);
			}
			catch (RuntimeException ex) {
				// a listener's failure must not break Lettuce's connection handling
			}
		}
	}

	/** The Cluster node at a socket address, named as {@link #shardOf} does (by its address when not in the map). */
	private String shardAt(SocketAddress remote) {
		if (!(remote instanceof InetSocketAddress address)) {
			return String.valueOf(remote);
		}
		Partitions slots = this.partitions;
		if (slots != null) {
			for (RedisClusterNode node : slots) {
				RedisURI uri = node.getUri();
				if (uri != null && uri.getPort() == address.getPort() && (uri.getHost().equals(address.getHostString())
						|| (address.getAddress() != null && uri.getHost().equals(address.getAddress().getHostAddress())))) {
					return name(node);
				}
			}
		}
		String host = address.getHostString();
		return (host.indexOf(':') >= 0) ? "[" + host + "]:" + address.getPort() : host + ":" + address.getPort();
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

	/**
	 * Remove a member from a sorted set.
	 * @param key the sorted set's key, encoded
	 * @param member the member, encoded
	 * @return the number of members removed
	 */
	CompletableFuture<Long> zrem(byte[] key, byte[] member) {
		RedisClusterAsyncCommands<byte[], byte[]> open = this.commands;
		if (open != null) {
			return open.zrem(key, member).toCompletableFuture();
		}
		return connect().thenCompose((connected) -> connected.zrem(key, member).toCompletableFuture());
	}

	/**
	 * Read Redis' clock ({@code TIME}): on a Cluster, the named master's (over the node connection Lettuce routes that
	 * master's commands on), else the server's.
	 * @param shard the master's {@code host:port} as {@link #shardOf} names it, or {@link StoreShards#SINGLE_SHARD}
	 * @return microseconds since the epoch; completed exceptionally with Lettuce's exception
	 */
	CompletableFuture<Long> time(String shard) {
		RedisClusterAsyncCommands<byte[], byte[]> open = this.commands;
		CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commands = (open != null)
				? CompletableFuture.completedFuture(open) : connect();
		return commands.thenCompose((redis) -> {
			CompletableFuture<StatefulRedisConnection<byte[], byte[]>> node = nodeConnection(shard);
			return (node != null) ? node.thenCompose((master) -> master.async().time().toCompletableFuture())
					: redis.time().toCompletableFuture();
		}).thenApply(LettuceScriptConnection::micros);
	}

	/**
	 * Whether a connection to a shard is established now (Lettuce's {@link StatefulConnection#isOpen()}: connected,
	 * not reconnecting): standalone or Sentinel, this connection; on a Cluster, its connection to the named master.
	 * @param shard {@link StoreShards#SINGLE_SHARD}, or on a Cluster a master's {@code host:port} as {@link #shardOf}
	 * names it
	 * @return {@code false} also when the connection is not open yet, or the master's connection is not made yet;
	 * never blocks
	 */
	boolean connectedTo(String shard) {
		StatefulConnection<byte[], byte[]> open = this.connection;
		if (open == null) {
			return false;
		}
		if (!this.cluster) {
			return open.isOpen();
		}
		try {
			CompletableFuture<StatefulRedisConnection<byte[], byte[]>> node = nodeConnection(shard);
			StatefulRedisConnection<byte[], byte[]> master = (node != null && node.isDone()
					&& !node.isCompletedExceptionally()) ? node.getNow(null) : null;
			return master != null && master.isOpen();
		}
		catch (RuntimeException ex) { // a node Lettuce does not know (any more)
			return false;
		}
	}

	/**
	 * The Cluster connection's connection to a master (Lettuce's, made on first use, then kept).
	 * @return {@code null} when this is no Cluster connection, or the shard names no master
	 */
	private @Nullable CompletableFuture<StatefulRedisConnection<byte[], byte[]>> nodeConnection(String shard) {
		int colon = shard.lastIndexOf(':');
		if (this.cluster && colon > 0
				&& this.connection instanceof StatefulRedisClusterConnection<byte[], byte[]> nodes) {
			String host = shard.startsWith("[") ? shard.substring(1, colon - 1) : shard.substring(0, colon);
			int port = Integer.parseInt(shard.substring(colon + 1));
			return nodes.getConnectionAsync(host, port);
		}
		return null;
	}

	/** {@code TIME}'s reply, seconds and microseconds, as microseconds since the epoch. */
	private static long micros(List<byte[]> time) {
		if (time.size() != 2) {
			throw new IllegalStateException("Unexpected reply to TIME with " + time.size() + " elements");
		}
		return Long.parseLong(new String(time.get(0), StandardCharsets.US_ASCII)) * 1_000_000L
				+ Long.parseLong(new String(time.get(1), StandardCharsets.US_ASCII));
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
		if (this.suspended) {
			return CompletableFuture.failedFuture(
					new IllegalStateException("The rate limiter's Redis connection is stopped"));
		}
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
					this.connecting = CONNECTS.submit(() -> {
						try {
							next.complete(open());
						}
						catch (Throwable ex) {
							next.completeExceptionally(ex);
						}
					});
					if (this.closed) { // closed meanwhile: suspend() may have missed this connect
						cancelConnect();
					}
				}
				catch (RuntimeException ex) { // the connect threads refused it
					next.completeExceptionally(ex);
				}
				return next;
			}
		}
	}

	/**
	 * Open the connection (blocking; runs on a connect thread). No lock is held while Lettuce connects,
	 * so {@link #close()} never waits for a connect in progress; a connection that opens after {@link #close()} is
	 * closed at once.
	 */
	private RedisClusterAsyncCommands<byte[], byte[]> open() {
		if (this.closed || this.suspended) {
			throw new IllegalStateException("The rate limiter's Redis connection is closed or stopped");
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
		listenTo(client); // before connecting: the first connection counts too
		StatefulConnection<byte[], byte[]> opened;
		RedisClusterAsyncCommands<byte[], byte[]> async;
		Partitions slots = null;
		if (client instanceof RedisClusterClient cluster) {
			StatefulRedisClusterConnection<byte[], byte[]> connection = cluster.connect(ByteArrayCodec.INSTANCE);
			opened = connection;
			async = connection.async();
			slots = connection.getPartitions();
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
			if (this.generation != openedIn || this.suspended) { // suspended meanwhile: the client is being shut down
				opened.closeAsync();
				throw new IllegalStateException("The rate limiter's Redis connection was suspended while opening");
			}
			if (!this.closed) {
				RedisClusterAsyncCommands<byte[], byte[]> current = this.commands;
				if (current != null) { // an attempt given up on (see connect()) came back after a newer one succeeded
					opened.closeAsync();
					return current;
				}
				this.connection = opened;
				this.partitions = slots;
				this.commands = async;
				return async;
			}
		}
		opened.closeAsync();
		throw new IllegalStateException("The rate limiter's Redis connection is closed");
	}

	/**
	 * Close the connection for now, e.g. because the connection factory is about to shut its client down; the next
	 * {@link #resume()} opens a new one from the factory's (new) client; until then calls fail at once (none opens a
	 * connection from a client about to be shut down). Never waits for a connect in progress: it is cancelled.
	 * @return completed once the connection is closed (at once when none was open)
	 */
	CompletableFuture<Void> suspend() {
		StatefulConnection<byte[], byte[]> open;
		synchronized (this) {
			this.suspended = true;
			open = this.connection;
			this.connection = null;
			this.commands = null;
			this.partitions = null;
			this.attempt.set(null);
			this.generation++;
		}
		cancelConnect();
		return (open != null) ? open.closeAsync() : CompletableFuture.completedFuture(null);
	}

	/**
	 * End a {@link #suspend()}: start opening the connection again in the background, from the factory's current
	 * client.
	 */
	void resume() {
		this.suspended = false;
		connect();
	}

	/**
	 * Abandon the connect in progress: its thread, waiting in Lettuce's blocking connect, is interrupted (Lettuce
	 * then fails it; a connection it still opens is closed by {@link #open()}, or with the client).
	 */
	private void cancelConnect() {
		Future<?> inProgress = this.connecting;
		if (inProgress != null) {
			this.connecting = null;
			inProgress.cancel(true);
		}
	}

	/** Close the connection; later calls fail. Never waits for a connect in progress: it is cancelled. */
	@Override
	public void close() {
		this.closed = true;
		suspend();
	}

	/** The failure a {@link CompletionException} wraps (the store's logs name it too). */
	static Throwable unwrap(Throwable ex) {
		Throwable cause = ex;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

}
