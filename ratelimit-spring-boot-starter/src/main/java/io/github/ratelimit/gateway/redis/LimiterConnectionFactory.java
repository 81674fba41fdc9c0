package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.EventLoopGroupProvider;
import io.lettuce.core.resource.Transports;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.tracing.Tracing;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.DirectFieldAccessor;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis connection factory every Redis user of the rate limiter goes through (the store's script connection,
 * the instance counter, the Redis plan store, and so the {@code ratelimits} endpoint's reset and the start-up access
 * probe): a Lettuce client of the limiter's own, so that the Lettuce options the limiter needs never change the
 * application's client.
 *
 * <p>{@link #copyOf(LettuceConnectionFactory, ClusterTopologyRefreshCustomizer) A copy} of the application's
 * {@link LettuceConnectionFactory} reaches the same Redis the same way: the same standalone, Sentinel, Cluster or
 * socket configuration (addresses, database, username and password), and the application's
 * {@link LettuceClientConfiguration} (TLS and peer verification, StartTLS, credentials provider, client name,
 * command timeout, read-from, shutdown timeouts, and its {@link ClientOptions} with the SSL options a Spring Boot SSL
 * bundle put there, its socket and timeout options), with the limiter's settings on top:
 * <ul>
 * <li>commands are rejected while the connection is down ({@link ClientOptions.DisconnectedBehavior#REJECT_COMMANDS})
 * instead of queued;</li>
 * <li>reconnect attempts back off to at most {@link #MAX_RECONNECT_DELAY};</li>
 * <li>a TCP connect attempt gives up after at most {@link #MAX_CONNECT_TIMEOUT};</li>
 * <li>on a Cluster, topology refresh as {@link ClusterTopologyRefreshCustomizer} sets it.</li>
 * </ul>
 * Its {@link ClientResources} are the application's, {@link ClientResources#mutate() mutated} with the limiter's
 * reconnect delay (the copy starts no threads, and closing it shuts none of the application's down). An application
 * factory without client resources of its own gets resources created for the copy, threads included, shut down with
 * it (destroying the copy waits for their threads to end, within the client's shutdown timeout); their I/O event
 * loops are held from initialisation until they shut down. Not copied: connection pooling and the factory's own
 * options (executor, pipelining).
 *
 * <p>{@link #sharing(ReactiveRedisConnectionFactory) Sharing} the application's factory instead (nothing of its own,
 * nothing applied) is for a factory that is not Lettuce's, a Redis configuration that cannot be copied (a static
 * master/replica one), and {@code ratelimit.redis.configure-application-client=true}.
 *
 * <p>A life cycle of its own: initialised ({@link #afterPropertiesSet()}), stopped and started in the application
 * factory's phase, and {@link #destroy() destroyed} on context close like a connection factory bean; a shared factory
 * is left alone. Why these options: {@code src/docs/design/limiter-chain.md}.
 */
public final class LimiterConnectionFactory implements InitializingBean, SmartLifecycle, DisposableBean {

	/** Longest wait between two reconnect attempts of the limiter's client to a Redis node. */
	public static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

	/**
	 * Least time the limiter's client waits for a script's reply (when the application's command timeout is
	 * shorter): a check that outlives {@code ratelimit.redis-timeout} is decided without Redis, and its reply, read
	 * later, has what Redis took refunded.
	 */
	public static final Duration MIN_SCRIPT_REPLY_TIMEOUT = Duration.ofSeconds(10);

	/** Longest a TCP connect of the limiter's client to a Redis node is waited for before it fails. */
	public static final Duration MAX_CONNECT_TIMEOUT = Duration.ofSeconds(2);

	/** Wait beyond the client's shutdown timeout for the threads of the limiter's own client resources to end. */
	static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(LimiterConnectionFactory.class);

	private final ReactiveRedisConnectionFactory connectionFactory;

	/** The limiter's own factory, null when sharing the application's. */
	private final @Nullable LettuceConnectionFactory own;

	/**
	 * Client resources created for {@link #own}, shut down with it (when mutated from the application's, that stops
	 * nothing of the application's, see {@link #clientResources}); null when sharing.
	 */
	private final @Nullable ClientResources ownResources;

	private final String description;

	/** Copies of {@link #own} on given event loops ({@link #onEventLoops}), owned by this factory; guarded by this. */
	private final Map<EventLoop, LettuceConnectionFactory> onEventLoops = new LinkedHashMap<>();

	/** Client resources of {@link #onEventLoops}' copies, per loop, shut down with them; guarded by this. */
	private final Map<EventLoop, ClientResources> onEventLoopsResources = new LinkedHashMap<>();

	/** Whether the event loops of the client's resources are held (see the class description). */
	private boolean eventLoopsHeld;

	private LimiterConnectionFactory(ReactiveRedisConnectionFactory connectionFactory,
			@Nullable LettuceConnectionFactory own, @Nullable ClientResources ownResources, String description) {
		this.connectionFactory = connectionFactory;
		this.own = own;
		this.ownResources = ownResources;
		this.description = description;
	}

	/**
	 * The limiter's Redis users go through the application's own factory; nothing is applied to it.
	 * @param application the application's connection factory (any client library)
	 * @return the shared factory
	 */
	public static LimiterConnectionFactory sharing(ReactiveRedisConnectionFactory application) {
		return new LimiterConnectionFactory(application, null, null,
				"the application's " + application.getClass().getSimpleName());
	}

	/**
	 * A Lettuce client of the limiter's own, copied from the application's factory with the limiter's settings (see
	 * the class description); the application's factory is not changed. When its Redis configuration cannot be
	 * copied (a static master/replica configuration, or any other kind than standalone, Sentinel, Cluster or socket),
	 * logs that at INFO and {@link #sharing shares} the application's factory instead.
	 * @param application the application's Lettuce connection factory (initialised or not)
	 * @param clusterRefresh topology refresh for a Cluster client
	 * @return the limiter's factory, to be initialised with {@link #afterPropertiesSet()}
	 */
	public static LimiterConnectionFactory copyOf(LettuceConnectionFactory application,
			ClusterTopologyRefreshCustomizer clusterRefresh) {
		RedisConfiguration configuration = redisConfiguration(application);
		if (configuration == null) {
			logger.info("The rate limiter shares the application's Redis client: the Redis configuration of {} ({}) "
					+ "cannot be copied (only standalone, Sentinel, Cluster and socket ones can), so the limiter's "
					+ "Lettuce settings (commands rejected while disconnected, reconnects at most {} apart) apply "
					+ "nowhere; set ratelimit.redis.configure-application-client=true to apply them to the "
					+ "application's client", application.getClass().getSimpleName(),
					configurationKind(application), MAX_RECONNECT_DELAY);
			return sharing(application);
		}
		LettuceClientConfiguration applicationClient = application.getClientConfiguration();
		ClientResources applicationResources = applicationClient.getClientResources().orElse(null);
		ClientResources resources = (applicationResources != null) ? clientResources(applicationResources)
				: DefaultClientResources.builder()
					.reconnectDelay(reconnectDelay())
					.commandLatencyRecorder(CommandLatencyRecorder.disabled())
					.tracing(Tracing.disabled())
					.build();
		boolean cluster = configuration instanceof RedisClusterConfiguration;
		ClientOptions options = clientOptions(applicationClient.getClientOptions().orElse(null), cluster,
				clusterRefresh, applicationClient.getCommandTimeout());
		LettuceClientConfiguration client = clientConfiguration(applicationClient, options, resources);
		// a standalone configuration through its own constructor: the generic one would leave the copy's
		// getStandaloneConfiguration() at its default (localhost) while it connects elsewhere
		LettuceConnectionFactory own = (configuration instanceof RedisStandaloneConfiguration standalone)
				? new LettuceConnectionFactory(standalone, client) : new LettuceConnectionFactory(configuration, client);
		own.setPhase(application.getPhase());
		String kind = (cluster) ? "Cluster" : (configuration instanceof RedisSentinelConfiguration) ? "Sentinel"
				: (configuration instanceof RedisSocketConfiguration) ? "socket" : "standalone";
		return new LimiterConnectionFactory(own, own, resources, "its own Lettuce client (" + kind + ")");
	}

	/**
	 * The Redis configuration a Lettuce factory connects with, when it is one the limiter can copy: standalone,
	 * Sentinel, Cluster or socket. Decided by the configuration's type, not by the values of the factory's getters:
	 * those fall back to a default standalone configuration (localhost:6379) when the factory was made with another
	 * kind, e.g. static master/replica, so a copy made from them would talk to a different Redis.
	 * @param application the factory
	 * @return the configuration, or {@code null} for one that cannot be copied
	 */
	static @Nullable RedisConfiguration redisConfiguration(LettuceConnectionFactory application) {
		Object configuration = configuredWith(application);
		boolean copyable = configuration instanceof RedisStandaloneConfiguration
				|| configuration instanceof RedisSentinelConfiguration
				|| configuration instanceof RedisClusterConfiguration
				|| configuration instanceof RedisSocketConfiguration;
		return (copyable) ? (RedisConfiguration) configuration : null;
	}

	private static @Nullable Object configuredWith(LettuceConnectionFactory application) {
		// Spring Data Redis 4.0 has no public getter for the configuration the factory was made with (its getters
		// each answer for one kind, the standalone one with a default), so read its private field
		return new DirectFieldAccessor(application).getPropertyValue("configuration");
	}

	private static String configurationKind(LettuceConnectionFactory application) {
		Object configuration = configuredWith(application);
		return (configuration != null) ? configuration.getClass().getSimpleName() : "none";
	}

	/**
	 * The limiter's client options: the application's (or Lettuce's defaults), with commands rejected while
	 * disconnected, a connect timeout of at most {@link #MAX_CONNECT_TIMEOUT} and, on a Cluster, the limiter's
	 * topology refresh.
	 * @param application the application's options, {@code null} for Lettuce's defaults
	 * @param cluster whether the client is a Cluster client
	 * @param clusterRefresh topology refresh for a Cluster client
	 * @return the options ({@link ClusterClientOptions} on a Cluster)
	 */
	static ClientOptions clientOptions(@Nullable ClientOptions application, boolean cluster,
			ClusterTopologyRefreshCustomizer clusterRefresh) {
		return clientOptions(application, cluster, clusterRefresh, null);
	}

	/**
	 * The limiter's client options, as {@link #clientOptions(ClientOptions, boolean, ClusterTopologyRefreshCustomizer)},
	 * and, when the application's options time commands out, script commands ({@code EVAL}, {@code EVALSHA}) timed
	 * out after at least {@link #MIN_SCRIPT_REPLY_TIMEOUT}: a check's reply that comes later than the limiter waited
	 * ({@code ratelimit.redis-timeout}) is still read, so that a check Redis ran in time is refunded. Other commands
	 * keep the application's timeout. (A check Redis runs after its deadline, e.g. re-sent after a reconnect, charges
	 * nothing whatever this timeout: the script refuses it.)
	 * @param application the application's options, {@code null} for Lettuce's defaults
	 * @param cluster whether the client is a Cluster client
	 * @param clusterRefresh topology refresh for a Cluster client
	 * @param commandTimeout the application's command timeout, {@code null} to keep its timeout options as they are
	 * @return the options
	 */
	static ClientOptions clientOptions(@Nullable ClientOptions application, boolean cluster,
			ClusterTopologyRefreshCustomizer clusterRefresh, @Nullable Duration commandTimeout) {
		ClientOptions.Builder builder;
		if (cluster) {
			builder = (application != null) ? ClusterClientOptions.builder(application) : ClusterClientOptions.builder();
			clusterRefresh.customize(builder);
		}
		else {
			builder = (application != null) ? application.mutate() : ClientOptions.builder();
		}
		SocketOptions socket = (application != null) ? application.getSocketOptions() : SocketOptions.create();
		if (socket.getConnectTimeout().compareTo(MAX_CONNECT_TIMEOUT) > 0) {
			socket = socket.mutate().connectTimeout(MAX_CONNECT_TIMEOUT).build();
		}
		builder.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).socketOptions(socket);
		TimeoutOptions timeouts = (application != null) ? application.getTimeoutOptions() : TimeoutOptions.create();
		if (commandTimeout != null && timeouts.isTimeoutCommands()) {
			builder.timeoutOptions(
					TimeoutOptions.builder().timeoutSource(new ScriptReplyTimeout(timeouts, commandTimeout)).build());
		}
		return builder.build();
	}

	/**
	 * The application's command timeouts, with script commands given at least {@link #MIN_SCRIPT_REPLY_TIMEOUT}.
	 */
	private static final class ScriptReplyTimeout extends TimeoutOptions.TimeoutSource {

		private final TimeoutOptions application;

		private final long commandTimeoutNanos;

		ScriptReplyTimeout(TimeoutOptions application, Duration commandTimeout) {
			this.application = application;
			this.commandTimeoutNanos = commandTimeout.toNanos();
		}

		@Override
		public long getTimeout(RedisCommand<?, ?, ?> command) {
			long nanos = this.application.isApplyConnectionTimeout() ? this.commandTimeoutNanos
					: this.application.getSource().getTimeUnit()
						.toNanos(this.application.getSource().getTimeout(command));
			ProtocolKeyword type = command.getType();
			if ((type == CommandType.EVALSHA || type == CommandType.EVAL) && nanos > 0) {
				return Math.max(nanos, MIN_SCRIPT_REPLY_TIMEOUT.toNanos());
			}
			return nanos;
		}

		@Override
		public TimeUnit getTimeUnit() {
			return TimeUnit.NANOSECONDS;
		}

	}

	/**
	 * The limiter's client resources: the application's with the limiter's reconnect delay, and no per-command
	 * tracing (observations) or latency recording (the limiter's own meters time its checks). Lettuce's
	 * {@code mutate()} alone would give the copy I/O event loops of its own (threads, which its shutdown would have to
	 * stop) and would let its shutdown stop the application's executor and timer, so every thread-owning part is
	 * handed over again, which marks it shared.
	 * @param application the application's resources
	 * @return resources whose shutdown stops nothing of the application's
	 */
	static ClientResources clientResources(ClientResources application) {
		return sharingThreadsOf(application, application.eventLoopGroupProvider()).reconnectDelay(reconnectDelay())
			.build();
	}

	/**
	 * Resources whose Lettuce client does all its I/O on one event loop (see {@link #onEventLoops}).
	 * @param limiter the limiter's client resources
	 * @param eventLoop the loop
	 * @return resources whose shutdown stops nothing (the loop is not theirs)
	 */
	static ClientResources onEventLoop(ClientResources limiter, EventLoop eventLoop) {
		return sharingThreadsOf(limiter, new SingleEventLoopProvider(eventLoop)).build();
	}

	private static ClientResources.Builder sharingThreadsOf(ClientResources resources,
			EventLoopGroupProvider eventLoops) {
		return resources.mutate()
			.eventLoopGroupProvider(eventLoops)
			.eventExecutorGroup(resources.eventExecutorGroup())
			.timer(resources.timer())
			.commandLatencyRecorder(CommandLatencyRecorder.disabled())
			.commandLatencyPublisherOptions(DefaultEventPublisherOptions.disabled())
			.tracing(Tracing.disabled());
	}

	/**
	 * The limiter's reconnect delay: exponential from 1 ms, at most {@link #MAX_RECONNECT_DELAY}.
	 * @return the delay
	 */
	public static Delay reconnectDelay() {
		return Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS);
	}

	private static LettuceClientConfiguration clientConfiguration(LettuceClientConfiguration application,
			ClientOptions options, ClientResources resources) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (application.isUseSsl()) {
			LettuceSslClientConfigurationBuilder ssl = builder.useSsl().verifyPeer(application.getVerifyMode());
			if (application.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		application.getClientName().ifPresent(builder::clientName);
		application.getReadFrom().ifPresent(builder::readFrom);
		application.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		return builder.commandTimeout(application.getCommandTimeout())
			.shutdownTimeout(application.getShutdownTimeout())
			.shutdownQuietPeriod(application.getShutdownQuietPeriod())
			.clientOptions(options)
			.clientResources(resources)
			.build();
	}

	/**
	 * The factory the limiter's Redis users go through.
	 * @return the limiter's own Lettuce factory, or the application's when shared
	 */
	public ReactiveRedisConnectionFactory getConnectionFactory() {
		return this.connectionFactory;
	}

	/**
	 * Whether the limiter has a Lettuce client of its own (else it shares the application's factory).
	 * @return whether the client is the limiter's own
	 */
	public boolean isOwnClient() {
		return this.own != null;
	}

	/**
	 * Copies of the limiter's own factory whose Lettuce clients do all their I/O (connects, reconnects, reads and
	 * writes, on a Cluster to every node) on one given event loop each, so that a command written on that loop's
	 * thread is answered on it. Owned by this factory: initialised (started) now, stopped, started and destroyed
	 * with it. Asked again, answers the copies already made for loops given before, makes copies for new loops, and
	 * destroys the copies of loops no longer given (a server that was stopped and started again runs on new loops).
	 * @param eventLoops the loops, e.g. the WebFlux server's
	 * @return a copy per loop, in the loops' order; empty when this factory shares the application's, when its client
	 * connects to a Unix socket, when no loop is given, or when the loops' transport is not Lettuce's (native epoll on
	 * one side, NIO on the other: logged at INFO)
	 */
	public synchronized Map<EventLoop, LettuceConnectionFactory> onEventLoops(List<EventLoop> eventLoops) {
		LettuceConnectionFactory lettuce = this.own;
		ClientResources resources = this.ownResources;
		if (lettuce == null || resources == null || configuredWith(lettuce) instanceof RedisSocketConfiguration) {
			return Map.of();
		}
		List<EventLoop> gone = new ArrayList<>(this.onEventLoops.keySet());
		gone.removeAll(eventLoops);
		gone.forEach(this::destroyCopy);
		List<EventLoop> added = new ArrayList<>(eventLoops);
		added.removeAll(this.onEventLoops.keySet());
		if (!added.isEmpty() && !SingleEventLoopProvider.canCarryLettuceChannels(added.get(0),
				MAX_CONNECT_TIMEOUT.toMillis())) {
			logger.info("The rate limiter's Redis connections stay on Lettuce's own threads: the server's event loops "
					+ "({}) cannot carry Lettuce's channels ({})", added.get(0).getClass().getName(),
					Transports.socketChannelClass().getName());
			added.clear();
		}
		RedisConfiguration configuration = redisConfiguration(lettuce);
		LettuceClientConfiguration client = lettuce.getClientConfiguration();
		ClientOptions options = client.getClientOptions().orElseGet(ClientOptions::create);
		for (EventLoop eventLoop : added) {
			ClientResources onLoop = onEventLoop(resources, eventLoop);
			LettuceClientConfiguration copy = clientConfiguration(client, options, onLoop);
			LettuceConnectionFactory factory = (configuration instanceof RedisStandaloneConfiguration standalone)
					? new LettuceConnectionFactory(standalone, copy)
					: new LettuceConnectionFactory(Objects.requireNonNull(configuration), copy);
			factory.setPhase(lettuce.getPhase());
			factory.afterPropertiesSet();
			this.onEventLoopsResources.put(eventLoop, onLoop);
			this.onEventLoops.put(eventLoop, factory);
		}
		Map<EventLoop, LettuceConnectionFactory> copies = new LinkedHashMap<>();
		for (EventLoop eventLoop : eventLoops) {
			LettuceConnectionFactory copy = this.onEventLoops.get(eventLoop);
			if (copy != null) {
				copies.put(eventLoop, copy);
			}
		}
		return Collections.unmodifiableMap(copies);
	}

	/** Destroys the copy on a loop and shuts its resources down (which stops nothing: the loop is not theirs). */
	private void destroyCopy(EventLoop eventLoop) {
		LettuceConnectionFactory copy = this.onEventLoops.remove(eventLoop);
		ClientResources resources = this.onEventLoopsResources.remove(eventLoop);
		if (copy != null) {
			copy.destroy();
		}
		if (resources != null) {
			resources.shutdown(0, 0, TimeUnit.MILLISECONDS);
		}
	}

	/**
	 * One of the I/O event loops of the limiter's own client (Lettuce's threads), for {@link #onEventLoops} to put a
	 * connection on that calls from any other thread go out on.
	 * @return the loop; {@code null} when this factory shares the application's
	 */
	public synchronized @Nullable EventLoop clientEventLoop() {
		ClientResources resources = this.ownResources;
		if (this.own == null || resources == null) {
			return null;
		}
		EventLoopGroup group = resources.eventLoopGroupProvider().allocate(Transports.eventLoopGroupClass());
		return group.next();
	}

	/**
	 * Initialises (and so starts) the limiter's own factory (nothing else when shared), and holds the event loops of
	 * the client resources its client uses until those resources are shut down (see the class description).
	 */
	@Override
	public void afterPropertiesSet() {
		if (this.own != null) {
			this.own.afterPropertiesSet();
		}
		holdEventLoops();
	}

	private synchronized void holdEventLoops() {
		LettuceConnectionFactory lettuce = (this.own != null) ? this.own
				: (this.connectionFactory instanceof LettuceConnectionFactory application) ? application : null;
		if (this.eventLoopsHeld || lettuce == null) {
			return;
		}
		ClientResources resources = lettuce.getClientConfiguration().getClientResources().orElse(null);
		if (resources == null) {
			return; // resources a client creates for itself are shut down with that client, nothing to hold
		}
		this.eventLoopsHeld = true;
		// a reference of the provider's event loop group for each transport the client connects with (the client's
		// own references are released when it shuts down); released by the resources' shutdown, after their timer
		EventLoopGroupProvider provider = resources.eventLoopGroupProvider();
		provider.allocate(Transports.eventLoopGroupClass());
		if (configuredWith(lettuce) instanceof RedisSocketConfiguration
				&& Transports.NativeTransports.isDomainSocketSupported()) {
			provider.allocate(Transports.NativeTransports.eventLoopGroupClass(true));
		}
	}

	@Override
	public void start() {
		if (this.own != null) {
			this.own.start();
		}
		copiesOnEventLoops().forEach(LettuceConnectionFactory::start);
	}

	/**
	 * Stops the limiter's own factory and its copies on event loops (shuts their clients down; {@link #start()} makes
	 * new ones).
	 */
	@Override
	public void stop() {
		copiesOnEventLoops().forEach(LettuceConnectionFactory::stop);
		if (this.own != null) {
			this.own.stop();
		}
	}

	private synchronized List<LettuceConnectionFactory> copiesOnEventLoops() {
		return new ArrayList<>(this.onEventLoops.values());
	}

	/**
	 * Whether the limiter's own factory runs; always when shared (the application's factory has its own life cycle).
	 * @return whether running
	 */
	@Override
	public boolean isRunning() {
		return this.own == null || this.own.isRunning();
	}

	/**
	 * The application factory's phase, which the copy took: the store's connection, one phase later, stops before it.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return (this.own != null) ? this.own.getPhase() : 0;
	}

	/**
	 * Destroys the limiter's own factory (its client and connections) and shuts down the client resources created for
	 * it, waiting for that within the client's shutdown timeout (plus {@link #SHUTDOWN_GRACE} for the threads to
	 * end) so that their threads do not outlive the context; what they share with the application (event loops,
	 * executor, timer) stays running. Nothing when shared.
	 */
	@Override
	public void destroy() {
		if (this.own == null) {
			return;
		}
		copiesOnEventLoops().forEach(LettuceConnectionFactory::destroy);
		this.own.destroy();
		LettuceClientConfiguration client = this.own.getClientConfiguration();
		long timeout = client.getShutdownTimeout().toMillis();
		long quietPeriod = Math.min(client.getShutdownQuietPeriod().toMillis(), timeout);
		List<ClientResources> resources = new ArrayList<>();
		synchronized (this) {
			resources.addAll(this.onEventLoopsResources.values());
		}
		if (this.ownResources != null) {
			resources.add(this.ownResources);
		}
		for (ClientResources shutDown : resources) {
			Future<Boolean> shutdown = shutDown.shutdown(quietPeriod, timeout, TimeUnit.MILLISECONDS);
			try {
				shutdown.get(timeout + SHUTDOWN_GRACE.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				logger.debug("The rate limiter's Lettuce client resources did not shut down within {} ms", timeout, ex);
			}
		}
	}

	@Override
	public String toString() {
		return "LimiterConnectionFactory[" + this.description + "]";
	}

}
