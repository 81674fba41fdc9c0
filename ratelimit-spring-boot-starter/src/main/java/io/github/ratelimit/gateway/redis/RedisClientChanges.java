package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.chain.ClientChange;
import io.github.ratelimit.gateway.chain.ClientChangeListener;
import io.github.ratelimit.gateway.chain.ClientChanges;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.support.ThrottledLog;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link ClientChanges} over one Redis pub/sub channel, {@code <key-prefix>:changes}: a change is one {@code PUBLISH},
 * and every instance subscribed to the channel (the publisher included) hands it to its listeners (the limiter chain)
 * as Redis delivers it, on a Lettuce I/O thread.
 *
 * <p>A message is one line, {@code client <tag>:<id> <group>}: the client's kind ({@link ClientKey.Kind#tag()}) and id
 * (an API key, principal or header value only by its hash), then the endpoint group (the rest of the line). Messages of
 * another form are ignored, so a later version may add some.
 *
 * <p>Two connections of the limiter's own Lettuce client (a {@link LettuceConnectionFactory}'s native client:
 * standalone, Sentinel-managed or Cluster, with its credentials and TLS): one subscribed to the channel, one to
 * publish on. They are opened at {@link #start()} on a daemon thread, {@code ratelimit-client-changes}, which retries
 * every {@link #RETRY_INTERVAL} while Redis cannot be reached; once open, Lettuce reconnects them by itself and
 * subscribes again. Each time the subscription is confirmed (the first time, and after every reconnect) the listeners
 * are told that {@linkplain ClientChangeListener#changesMissed() changes may have been missed} while it was down: an
 * instance cut off from the channel misses messages, and drops everything a missed one could have made wrong as soon
 * as it is subscribed again. On a Redis Cluster a plain {@code PUBLISH} reaches the subscribers of every node (the
 * cluster bus carries it), so the subscription may be on any node; a change is rare enough that the bus's fan-out
 * costs nothing worth a shard channel. Why: {@code src/docs/design/limiter-chain.md}.
 */
public class RedisClientChanges implements ClientChanges, SmartLifecycle, AutoCloseable {

	/** Wait between two attempts to open the connections while Redis cannot be reached. */
	public static final Duration RETRY_INTERVAL = Duration.ofSeconds(1);

	/** Longest a {@link #publish} waits for Redis' answer before it fails. */
	public static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(1);

	/** The channel's name after the key prefix. */
	public static final String CHANNEL_SUFFIX = ":changes";

	private static final Logger logger = LoggerFactory.getLogger(RedisClientChanges.class);

	private static final String CLIENT = "client";

	private final LettuceConnectionFactory connectionFactory;

	private final String channel;

	private final int phase;

	private final List<ClientChangeListener> listeners = new CopyOnWriteArrayList<>();

	private final Subscriber subscriber = new Subscriber();

	private final AtomicLong subscriptions = new AtomicLong();

	/** Redis refusing the subscription (an ACL without the channel): a WARN at most once per minute. */
	private final ThrottledLog refusedWarning = new ThrottledLog(Duration.ofMinutes(1));

	/** The thread that opens the connections; null while stopped. Guarded by this. */
	private @Nullable ScheduledExecutorService opener;

	/** Guarded by this. */
	private @Nullable StatefulRedisPubSubConnection<String, String> subscription;

	private volatile @Nullable StatefulConnection<String, String> publishing;

	private volatile boolean running;

	/**
	 * Create the carrier; nothing is opened before {@link #start()}.
	 * @param connectionFactory the limiter's Lettuce factory (its native client is used)
	 * @param keyPrefix prefix of the limiter's Redis keys: the channel is {@code <keyPrefix>:changes}
	 */
	public RedisClientChanges(LettuceConnectionFactory connectionFactory, String keyPrefix) {
		this.connectionFactory = connectionFactory;
		this.channel = keyPrefix + CHANNEL_SUFFIX;
		this.phase = (connectionFactory.getPhase() < Integer.MAX_VALUE) ? connectionFactory.getPhase() + 1
				: Integer.MAX_VALUE;
	}

	/**
	 * The channel's name.
	 * @return {@code <keyPrefix>:changes}
	 */
	public String channel() {
		return this.channel;
	}

	/**
	 * {@inheritDoc}
	 * <p>One {@code PUBLISH} on the publishing connection; fails at once while that connection has not been opened,
	 * and after {@link #PUBLISH_TIMEOUT} without Redis' answer.
	 */
	@Override
	public CompletableFuture<Void> publish(ClientChange change) {
		StatefulConnection<String, String> open = this.publishing;
		if (open == null) {
			return CompletableFuture.failedFuture(new IllegalStateException(
					"the connection to publish on channel '" + this.channel + "' is not open (Redis unreachable?)"));
		}
		String message = encode(change);
		CompletableFuture<Long> sent = (open instanceof StatefulRedisClusterConnection<String, String> cluster)
				? cluster.async().publish(this.channel, message).toCompletableFuture()
				: ((StatefulRedisConnection<String, String>) open).async()
					.publish(this.channel, message)
					.toCompletableFuture();
		return sent.copy().orTimeout(PUBLISH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).thenApply((receivers) -> null);
	}

	@Override
	public void listen(ClientChangeListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Whether the subscription to the channel is open (Lettuce may be reconnecting it).
	 * @return whether it was opened and not closed since
	 */
	public synchronized boolean isSubscribed() {
		return this.subscription != null && this.subscription.isOpen();
	}

	/**
	 * How many times Redis confirmed the subscription since this carrier was made: once after {@link #start()}, once
	 * more after each reconnect.
	 * @return the count
	 */
	public long subscriptions() {
		return this.subscriptions.get();
	}

	/** Opens the connections in the background (see the class description); never waits for Redis. */
	@Override
	public synchronized void start() {
		if (this.opener != null) {
			return;
		}
		this.running = true;
		ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread daemon = new Thread(task, "ratelimit-client-changes");
			daemon.setDaemon(true);
			return daemon;
		});
		this.opener = thread;
		thread.execute(() -> open(thread));
	}

	/** Opens the connections on the opener thread; on failure tries again after {@link #RETRY_INTERVAL}. */
	private void open(ScheduledExecutorService thread) {
		StatefulRedisPubSubConnection<String, String> subscribed = null;
		StatefulConnection<String, String> publisher = null;
		try {
			AbstractRedisClient client = this.connectionFactory.getRequiredNativeClient();
			if (client instanceof RedisClusterClient cluster) {
				subscribed = cluster.connectPubSub(StringCodec.UTF8);
				publisher = cluster.connect(StringCodec.UTF8);
			}
			else if (client instanceof RedisClient standalone) {
				subscribed = standalone.connectPubSub(StringCodec.UTF8);
				publisher = standalone.connect(StringCodec.UTF8);
			}
			else {
				logger.warn("Rate limiter: changes of clients are not carried to other instances: unsupported "
						+ "Lettuce client {}", client.getClass().getName());
				return;
			}
			subscribed.addListener(this.subscriber);
			synchronized (this) {
				if (this.opener != thread) { // stopped meanwhile
					subscribed.closeAsync();
					publisher.closeAsync();
					return;
				}
				this.subscription = subscribed;
				this.publishing = publisher;
			}
			StatefulRedisPubSubConnection<String, String> opened = subscribed;
			subscribed.async().subscribe(this.channel).whenComplete((ignored, ex) -> {
				if (ex != null) {
					refused(thread, opened, ex);
				}
			});
		}
		catch (RuntimeException ex) {
			if (subscribed != null) {
				subscribed.closeAsync();
			}
			if (publisher != null) {
				publisher.closeAsync();
			}
			logger.debug("Subscribing to channel '{}' failed, again in {}: {}", this.channel, RETRY_INTERVAL,
					ex.toString());
			synchronized (this) {
				if (this.opener == thread) {
					thread.schedule(() -> open(thread), RETRY_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
				}
			}
		}
	}

	/**
	 * Redis refused the subscription (e.g. {@code NOPERM}: the ACL user may not use the channel): the connections
	 * are closed and opened again after {@link #RETRY_INTERVAL}; logged at WARN at most once a minute.
	 */
	private void refused(ScheduledExecutorService thread, StatefulRedisPubSubConnection<String, String> subscribed,
			Throwable ex) {
		this.refusedWarning.log((skipped) -> logger.warn("Rate limiter: Redis refused the subscription to channel "
				+ "'{}' ({}): a reset or top-up through another instance's ratelimits endpoint does not reach this "
				+ "one's remembered denials and leases until they end (grant the ACL user '&{} +subscribe +publish', "
				+ "see 'The minimal ACL rule' in the operations guide){}", this.channel,
				LettuceScriptConnection.unwrap(ex).getMessage(), this.channel, ThrottledLog.notLogged(skipped)));
		StatefulConnection<String, String> publisher;
		synchronized (this) {
			if (this.opener != thread || this.subscription != subscribed) {
				return;
			}
			publisher = this.publishing;
			this.subscription = null;
			this.publishing = null;
			thread.schedule(() -> open(thread), RETRY_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
		}
		subscribed.removeListener(this.subscriber);
		subscribed.closeAsync();
		if (publisher != null) {
			publisher.closeAsync();
		}
	}

	/** Closes the connections (without waiting for Redis) and ends the opener thread. */
	@Override
	public void stop() {
		StatefulRedisPubSubConnection<String, String> subscribed;
		StatefulConnection<String, String> publisher;
		ScheduledExecutorService thread;
		synchronized (this) {
			this.running = false;
			thread = this.opener;
			subscribed = this.subscription;
			publisher = this.publishing;
			this.opener = null;
			this.subscription = null;
			this.publishing = null;
		}
		if (thread != null) {
			thread.shutdownNow();
		}
		if (subscribed != null) {
			subscribed.removeListener(this.subscriber);
			subscribed.closeAsync();
		}
		if (publisher != null) {
			publisher.closeAsync();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * One after the connection factory's phase: stops before its client shuts down, starts after it.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return this.phase;
	}

	@Override
	public void close() {
		stop();
	}

	@Override
	public String toString() {
		return "RedisClientChanges[channel=" + this.channel + "]";
	}

	/**
	 * A change as a message.
	 * @param change the change
	 * @return {@code client <tag>:<id> <group>}
	 */
	static String encode(ClientChange change) {
		return CLIENT + ' ' + change.kind().tag() + ':' + change.id() + ' ' + change.group();
	}

	/**
	 * A message as a change.
	 * @param message the message
	 * @return the change, or {@code null} when the message is not one
	 */
	static @Nullable ClientChange decode(String message) {
		if (!message.startsWith(CLIENT + ' ')) {
			return null;
		}
		int clientStart = CLIENT.length() + 1;
		int groupSpace = message.indexOf(' ', clientStart);
		int colon = message.indexOf(':', clientStart);
		if (groupSpace < 0 || colon < 0 || colon > groupSpace || groupSpace == message.length() - 1) {
			return null;
		}
		String tag = message.substring(clientStart, colon);
		for (ClientKey.Kind kind : ClientKey.Kind.values()) {
			if (kind.tag().equals(tag) && kind != ClientKey.Kind.GROUP) {
				String id = message.substring(colon + 1, groupSpace);
				return id.isEmpty() ? null : new ClientChange(message.substring(groupSpace + 1), kind, id);
			}
		}
		return null;
	}

	/** Hands messages and (re)subscriptions to the listeners; a listener's failure is logged, never Lettuce's. */
	private final class Subscriber extends RedisPubSubAdapter<String, String> {

		@Override
		public void message(String channel, String message) {
			ClientChange change = decode(message);
			if (change == null) {
				logger.debug("Ignored a message on channel '{}' that is no change of a client", channel);
				return;
			}
			for (ClientChangeListener listener : RedisClientChanges.this.listeners) {
				try {
					listener.clientChanged(change);
				}
				catch (RuntimeException ex) {
					logger.warn("A listener failed to take a change of a client: {}", ex.toString());
				}
			}
		}

		@Override
		public void subscribed(String channel, long count) {
			logger.debug("Subscribed to channel '{}': dropping what a change missed meanwhile could have made wrong",
					channel);
			for (ClientChangeListener listener : RedisClientChanges.this.listeners) {
				try {
					listener.changesMissed();
				}
				catch (RuntimeException ex) {
					logger.warn("A listener failed to drop its state after a (re)subscription: {}", ex.toString());
				}
			}
			RedisClientChanges.this.subscriptions.incrementAndGet();
		}

	}

}
