package io.github.ratelimit.gateway.redis;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.github.ratelimit.gateway.chain.StoreShards;

/**
 * Runs Lua scripts and deletes keys on Redis, answering futures: the seam between the Redis store's logic
 * ({@link RedisRateLimitStore}: keys, arguments, replies; {@link InstanceCounter}'s heartbeats) and the client
 * library that talks to Redis. Two
 * implementations ship, one per way of reaching Redis, as Boot splits its own Redis configuration per client:
 * {@link LettuceScriptExecutor} (a Lettuce connection of its own, what the auto-configuration uses with a
 * {@code LettuceConnectionFactory}) and {@link SpringDataScriptExecutor} (any reactive connection factory, through
 * Spring Data Redis).
 *
 * <p>Keys and arguments are bytes, encoded once by the caller. On a Redis Cluster every key of one call must hash to
 * one slot. Futures may complete on the client library's I/O thread: callers must not block in their callbacks.
 * Implementations never throw from these methods; every failure (Redis unreachable, a timeout of the client
 * library, an error reply) completes the future exceptionally.
 */
public interface RedisScriptExecutor extends AutoCloseable {

	/**
	 * Run a script with {@code EVALSHA}, and with {@code EVAL} (which also loads it) when Redis answers
	 * {@code NOSCRIPT} (after a restart, a failover or {@code SCRIPT FLUSH}).
	 * @param script the script
	 * @param keys the script's {@code KEYS}, encoded
	 * @param args the script's {@code ARGV}, encoded; not modified
	 * @return the script's reply as a list: an array reply's elements (integers as {@link Long}), an integer reply
	 * as a list of that one {@link Long}; completed exceptionally when Redis cannot be reached or answers an error
	 */
	CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args);

	/**
	 * Delete keys ({@code DEL}).
	 * @param keys the keys, encoded, at least one (on a Cluster, all in one hash slot)
	 * @return the number of keys that existed; completed exceptionally when Redis cannot be reached
	 */
	CompletableFuture<Long> delete(byte[][] keys);

	/**
	 * Remove a member from a sorted set ({@code ZREM}).
	 * @param key the sorted set's key, encoded
	 * @param member the member, encoded
	 * @return the number of members removed (0 or 1); completed exceptionally when Redis cannot be reached
	 */
	CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member);

	/**
	 * Read a shard's clock ({@code TIME}), off the request path: the store sends checks their deadline in Redis time
	 * ({@link RedisClocks}). The default runs a script with no keys that answers {@code TIME} (so on a Cluster, any
	 * node's); an executor of shards reads the named master's.
	 * @param shard the shard, as {@link #shards()} names it
	 * @return Redis' time on that shard, in microseconds since the epoch; completed exceptionally when it cannot be
	 * reached
	 */
	default CompletableFuture<Long> time(String shard) {
		return eval(RedisClocks.TIME_SCRIPT, new byte[0][], new byte[0][]).thenApply((reply) -> {
			if (reply.size() == 1 && reply.get(0) instanceof Long micros) {
				return micros;
			}
			throw new IllegalStateException("Unexpected reply to TIME: " + reply);
		});
	}

	/**
	 * Whether calls go to shards that fail on their own (a Redis Cluster's masters). The default: no.
	 * @return whether {@link #shardOf} can name more than one shard
	 */
	default boolean isSharded() {
		return false;
	}

	/**
	 * The shard serving a key. The default: {@link StoreShards#SINGLE_SHARD}.
	 * @param key the key, or its start through its hash tag's closing brace, encoded
	 * @return the {@code host:port} of the Cluster master serving the key's slot, or
	 * {@link StoreShards#SINGLE_SHARD} when Redis is not split or its topology is not known yet; never blocks
	 */
	default String shardOf(byte[] key) {
		return StoreShards.SINGLE_SHARD;
	}

	/**
	 * The shards serving keys now. The default: {@link StoreShards#SINGLE_SHARD} alone.
	 * @return the Cluster masters' {@code host:port}, or {@code {SINGLE_SHARD}}
	 */
	default Set<String> shards() {
		return Set.of(StoreShards.SINGLE_SHARD);
	}

	/**
	 * Whether a call failed because the client library refused it, unsent, while its connection to Redis is down and
	 * being re-established: Lettuce's {@code RedisException} "Currently not connected. Commands are rejected." under
	 * {@code DisconnectedBehavior.REJECT_COMMANDS}, which the starter sets. Recognised by class name and message, so
	 * that no Lettuce class is needed to ask.
	 * @param error the failure, or one that wraps it (causes are followed)
	 * @return {@code true} when the call was refused so
	 */
	static boolean refusedWhileReconnecting(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause.getClass().getName().equals("io.lettuce.core.RedisException") && cause.getMessage() != null
					&& cause.getMessage().contains("not connected")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether the client library has a connection to a shard established now (of those this executor sends calls on;
	 * it may hold several, each reconnecting on its own). The default: not known ({@code false}).
	 * @param shard the shard, as {@link #shardOf} names it
	 * @return {@code true} only when a connection to the shard is known to be established; never blocks
	 * @see StoreShards#connectedTo
	 */
	default boolean connectedTo(String shard) {
		return false;
	}

	/**
	 * Be told each time the client library has established a connection to Redis (the first one and every
	 * reconnect), with the shard it leads to. The default: never called.
	 * @param listener called with the shard's name, as {@link #shardOf} names it ({@link StoreShards#SINGLE_SHARD}
	 * when Redis is not split), on the client library's I/O thread: it must be quick and must not block
	 * @return closing it stops the calls (idempotent)
	 * @see StoreShards#onConnected
	 */
	default AutoCloseable onConnected(Consumer<String> listener) {
		return () -> {
		};
	}

	/**
	 * Release what the executor opened (its own connection); later calls fail. The default does nothing.
	 */
	@Override
	default void close() {
	}

}
