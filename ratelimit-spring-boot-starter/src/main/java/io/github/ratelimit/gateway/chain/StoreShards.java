package io.github.ratelimit.gateway.chain;

import java.util.Set;
import java.util.function.Consumer;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * Which part of a shared store holds a client's buckets, so that the failure of one part (a Redis Cluster master)
 * affects only the clients whose buckets it holds ({@link ShardCircuitBreakers} keeps one circuit breaker per
 * shard). Implemented by the Redis store: on a Cluster a shard is the master serving the slot of the client's hash
 * tag, following Lettuce's view of the topology; standalone and Sentinel-managed Redis are one shard. A store that
 * does not implement it is one shard, {@link #SINGLE_SHARD}.
 */
public interface StoreShards {

	/** The name of the only shard of a store that is not split (standalone Redis, or a store without shards). */
	String SINGLE_SHARD = "single";

	/**
	 * The shard a call for these buckets goes to. Must be cheap (it runs on every check) and never block.
	 * @param client the client (the group-wide client of {@link ClientKey#everyone} for global limits)
	 * @param limits the limits of the call
	 * @return the shard's name ({@code host:port} of a Cluster master), never {@code null}; {@link #SINGLE_SHARD}
	 * when the store is not split or its topology is not known yet
	 */
	String shardOf(ClientKey client, PlanLimits limits);

	/**
	 * The shards that currently serve buckets (a Cluster's masters), for health reports.
	 * @return the shards' names; {@code {SINGLE_SHARD}} when the store is not split or its topology is not known yet
	 */
	Set<String> shards();

	/**
	 * Whether a call failed without reaching its shard, because the store's client refused it while the connection
	 * to that shard is down and being re-established (Lettuce with {@code REJECT_COMMANDS}). A half-open breaker does
	 * not take such a call as its trial: the trial is the first call sent once the connection is back; nor does a
	 * breaker count it while another connection to the shard is established ({@link #connectedTo}). Must be cheap
	 * and never block. The default: no call is known to be refused so.
	 * @param error the call's failure, unwrapped from {@code CompletionException}
	 * @return {@code true} only when the call is known not to have been sent
	 */
	default boolean refusedWhileReconnecting(Throwable error) {
		return false;
	}

	/**
	 * Whether the store's client has a connection to the shard established now. A store may hold several connections
	 * to one shard, each reconnecting on its own (the Redis store: one per server event loop besides a shared one); a
	 * call {@linkplain #refusedWhileReconnecting refused} on one of them while another is established says that its
	 * connection is still reconnecting, not that the shard fails, and no breaker counts it. Must be cheap and never
	 * block. The default: not known.
	 * @param shard the shard's name, as {@link #shardOf} gives it
	 * @return {@code true} only when a connection to the shard is known to be established; {@code false} when none
	 * is, or it is not known
	 */
	default boolean connectedTo(String shard) {
		return false;
	}

	/**
	 * Be told when the store's client has (re-)established a connection to a shard, so that a breaker opened by the
	 * outage can try the shard at once instead of after its wait. The listener is called on the client's I/O thread:
	 * it must be quick and must not block. The default: never called.
	 * @param listener called with the shard's name (as {@link #shardOf} names it; {@link #SINGLE_SHARD} when the
	 * store is not split) each time a connection to it is established
	 * @return closing it stops the calls (idempotent)
	 */
	default AutoCloseable onConnected(Consumer<String> listener) {
		return () -> {
		};
	}

}
