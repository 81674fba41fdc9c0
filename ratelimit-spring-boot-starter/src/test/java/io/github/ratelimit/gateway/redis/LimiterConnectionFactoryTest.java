package io.github.ratelimit.gateway.redis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.test.util.ReflectionTestUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The limiter's own Lettuce client, copied from an application's factory: its options and resources (pure logic),
 * and, against a real Redis, that it works beside the application's client and that closing it leaves the
 * application's client, event loops, executor and timer running.
 */
@ExtendWith(RedisExtension.class)
class LimiterConnectionFactoryTest {

	private static final ClusterTopologyRefreshCustomizer REFRESH = new ClusterTopologyRefreshCustomizer(
			ClusterTopologyRefreshCustomizer.DEFAULT_PERIOD, true, true);

	@Test
	void theLimitersOptionsAreTheApplicationsWithCommandsRejectedWhileDisconnected() {
		ClientOptions application = ClientOptions.builder()
			.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofMillis(750)).build())
			.requestQueueSize(1234)
			.build();
		ClientOptions limiter = LimiterConnectionFactory.clientOptions(application, false, REFRESH);
		assertThat(limiter).isNotInstanceOf(ClusterClientOptions.class);
		assertThat(limiter.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
		assertThat(limiter.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofMillis(750));
		assertThat(limiter.getRequestQueueSize()).isEqualTo(1234);
		// the application's options are not changed
		assertThat(application.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
		assertThat(LimiterConnectionFactory.clientOptions(null, false, REFRESH).getDisconnectedBehavior())
			.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
	}

	@Test
	void onAClusterTheLimitersOptionsAddTopologyRefresh() {
		ClusterClientOptions application = ClusterClientOptions.builder().maxRedirects(9).build();
		ClientOptions limiter = LimiterConnectionFactory.clientOptions(application, true, REFRESH);
		assertThat(limiter).isInstanceOfSatisfying(ClusterClientOptions.class, (cluster) -> {
			assertThat(cluster.getMaxRedirects()).isEqualTo(9);
			assertThat(cluster.getTopologyRefreshOptions().isPeriodicRefreshEnabled()).isTrue();
			assertThat(cluster.getTopologyRefreshOptions().getAdaptiveRefreshTriggers())
				.containsExactlyInAnyOrder(ClusterTopologyRefreshOptions.RefreshTrigger.values());
			assertThat(cluster.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
		});
		assertThat(application.getTopologyRefreshOptions().isPeriodicRefreshEnabled()).isFalse();
		// plain options on a Cluster factory become cluster options, as Spring Data's factory makes them
		assertThat(LimiterConnectionFactory.clientOptions(ClientOptions.create(), true, REFRESH))
			.isInstanceOf(ClusterClientOptions.class);
	}

	@Test
	void theLimitersResourcesShareTheApplicationsThreadsAndTheirShutdownStopsNoneOfThem() throws Exception {
		DefaultClientResources application = DefaultClientResources.create();
		try {
			ClientResources limiter = LimiterConnectionFactory.clientResources(application);
			assertThat(limiter.eventLoopGroupProvider()).isSameAs(application.eventLoopGroupProvider());
			assertThat(limiter.eventExecutorGroup()).isSameAs(application.eventExecutorGroup());
			assertThat(limiter.timer()).isSameAs(application.timer());
			assertThat(limiter.eventBus()).isSameAs(application.eventBus());
			assertThat(limiter.reconnectDelay().createDelay(30)).isEqualTo(Duration.ofSeconds(1));
			assertThat(application.reconnectDelay().createDelay(30)).isEqualTo(Duration.ofSeconds(30));
			assertThat(limiter.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS)).isTrue();
			// Lettuce's mutate() alone would have stopped these two with the copy
			assertThat(application.eventExecutorGroup().isShuttingDown()).isFalse();
			Timeout timeout = application.timer().newTimeout((t) -> {
			}, 1, TimeUnit.HOURS);
			assertThat(timeout.isCancelled()).isFalse();
			timeout.cancel();
		}
		finally {
			application.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
		}
	}

	@Test
	void theCopyWorksBesideTheApplicationsClientAndClosingItLeavesTheApplicationsRunning(TestRedis redis)
			throws Exception {
		DefaultClientResources resources = DefaultClientResources.create();
		LettuceConnectionFactory application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()),
				LettuceClientConfiguration.builder().clientResources(resources).build());
		application.afterPropertiesSet();
		try {
			ReactiveStringRedisTemplate applicationTemplate = new ReactiveStringRedisTemplate(application);
			assertThat(applicationTemplate.opsForValue().set("lcf:app", "1").block(Duration.ofSeconds(10))).isTrue();
			LimiterConnectionFactory limiter = LimiterConnectionFactory.copyOf(application, REFRESH);
			limiter.afterPropertiesSet();
			assertThat(limiter.isOwnClient()).isTrue();
			assertThat(limiter.isRunning()).isTrue();
			assertThat(limiter.getPhase()).isEqualTo(application.getPhase());
			// the copy's configuration is the application's, as its getters expose it
			assertThat(LimiterConnectionFactory.redisConfiguration(
					(LettuceConnectionFactory) limiter.getConnectionFactory()))
				.isSameAs(application.getStandaloneConfiguration());
			ReactiveStringRedisTemplate limiterTemplate = new ReactiveStringRedisTemplate(
					limiter.getConnectionFactory());
			assertThat(limiterTemplate.opsForValue().get("lcf:app").block(Duration.ofSeconds(10))).isEqualTo("1");
			limiter.destroy();
			assertThat(limiter.isRunning()).isFalse();
			// the application's client, event loops, executor and timer are still the application's, running
			assertThat(applicationTemplate.opsForValue().set("lcf:app", "2").block(Duration.ofSeconds(10))).isTrue();
			assertThat(redis.command("GET", "lcf:app")).isEqualTo("2");
			assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
		}
		finally {
			application.destroy();
			resources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
		}
	}

	/**
	 * Issue 27, part 5: stopping an application whose Redis was unreachable logged Netty's "Failed to submit a
	 * listener notification task. Event loop shut down?" with its stack trace. Both clients' connects fail; the
	 * context stops and destroys the factories (the last client's shutdown ended the shared event loops), the
	 * handshake timeouts of the failed connects fire on the still running timer, and only then are the client
	 * resources shut down, as Boot's bean is.
	 */
	@Test
	void stoppingAfterConnectsFailedLogsNoErrorWhenTheResourcesAreShutDownAfterTheClients() throws Exception {
		// Lettuce's handshake timeout of a connect: long enough to outlast the stop on a loaded machine
		Duration commandTimeout = Duration.ofSeconds(5);
		DefaultClientResources resources = DefaultClientResources.create();
		LettuceConnectionFactory application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", closedPort()),
				LettuceClientConfiguration.builder().clientResources(resources).commandTimeout(commandTimeout).build());
		Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
		ListAppender<ILoggingEvent> logged = new ListAppender<>();
		logged.start();
		root.addAppender(logged);
		try {
			application.afterPropertiesSet();
			LimiterConnectionFactory limiter = LimiterConnectionFactory.copyOf(application, REFRESH);
			limiter.afterPropertiesSet();
			assertThatThrownBy(() -> new ReactiveStringRedisTemplate(application).hasKey("lcf:closed")
				.block(Duration.ofSeconds(30))).hasMessageContaining("Unable to connect");
			assertThatThrownBy(() -> new ReactiveStringRedisTemplate(limiter.getConnectionFactory())
				.hasKey("lcf:closed")
				.block(Duration.ofSeconds(30))).hasMessageContaining("Unable to connect");
			// the order of a context's close: the limiter's factory first (it depends on the application's)
			limiter.stop();
			application.stop();
			limiter.destroy();
			application.destroy();
			assertThat(((HashedWheelTimer) resources.timer()).pendingTimeouts())
				.as("handshake timeouts still scheduled when the clients are gone").isPositive();
			// a timeout of the shared timer that fires after every handshake timeout scheduled so far, then a task
			// behind whatever those submitted to the executors
			CountDownLatch handshakeTimeoutsRun = new CountDownLatch(1);
			resources.timer().newTimeout((t) -> {
				List<Future<?>> behind = new ArrayList<>();
				for (EventExecutor executor : resources.eventExecutorGroup()) {
					behind.add(executor.submit(() -> {
					}));
				}
				for (Future<?> task : behind) {
					task.syncUninterruptibly();
				}
				handshakeTimeoutsRun.countDown();
			}, commandTimeout.toMillis() + 500, TimeUnit.MILLISECONDS);
			assertThat(handshakeTimeoutsRun.await(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			resources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
			root.detachAppender(logged);
		}
		assertThat(logged.list).filteredOn((event) -> event.getLevel().isGreaterOrEqual(Level.ERROR))
			.extracting(ILoggingEvent::getFormattedMessage)
			.isEmpty();
	}

	private static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	@Test
	void anApplicationFactoryWithoutResourcesGivesTheCopyResourcesShutDownWithIt(TestRedis redis) {
		LettuceConnectionFactory application = StartedConnectionFactory.to(redis.host(), redis.port());
		try {
			LimiterConnectionFactory limiter = LimiterConnectionFactory.copyOf(application, REFRESH);
			limiter.afterPropertiesSet();
			ClientResources own = (ClientResources) ReflectionTestUtils.getField(limiter, "ownResources");
			assertThat(own).isNotNull();
			assertThat(own.reconnectDelay().createDelay(30)).isEqualTo(Duration.ofSeconds(1));
			assertThat(new ReactiveStringRedisTemplate(limiter.getConnectionFactory()).hasKey("lcf:none")
				.block(Duration.ofSeconds(10))).isFalse();
			limiter.destroy();
			assertThat(own.eventExecutorGroup().isShuttingDown()).isTrue();
			assertThat(new ReactiveStringRedisTemplate(application).hasKey("lcf:none").block(Duration.ofSeconds(10)))
				.isFalse();
		}
		finally {
			application.destroy();
		}
	}

	@Test
	void destroyingTheCopyWaitsForTheThreadsOfTheResourcesCreatedForIt(TestRedis redis) {
		// no client resources of the application's; a quiet period Lettuce's own shutdown() (2 s) would not keep
		LettuceConnectionFactory application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()),
				LettuceClientConfiguration.builder()
					.shutdownQuietPeriod(Duration.ZERO)
					.shutdownTimeout(Duration.ofSeconds(10))
					.build());
		application.afterPropertiesSet();
		try {
			LimiterConnectionFactory limiter = LimiterConnectionFactory.copyOf(application, REFRESH);
			limiter.afterPropertiesSet();
			ClientResources own = (ClientResources) ReflectionTestUtils.getField(limiter, "ownResources");
			assertThat(new ReactiveStringRedisTemplate(limiter.getConnectionFactory()).hasKey("lcf:threads")
				.block(Duration.ofSeconds(10))).isFalse();
			limiter.destroy();
			// terminated when destroy() returns, not merely shutting down
			assertThat(own.eventExecutorGroup().isTerminated()).isTrue();
		}
		finally {
			application.destroy();
		}
	}

	@Test
	void aStaticMasterReplicaConfigurationIsNotCopied() {
		// with a password: the factory's standalone getters answer with a default configuration beside it
		RedisStaticMasterReplicaConfiguration withPassword = new RedisStaticMasterReplicaConfiguration("10.0.0.1",
				6379);
		withPassword.setPassword("secret");
		assertShared(new LettuceConnectionFactory(withPassword));
		// without one, on the default port: the default standalone configuration (localhost:6379, no password) looks
		// like the one in use, and a copy of it would talk to another Redis
		assertShared(new LettuceConnectionFactory(new RedisStaticMasterReplicaConfiguration("10.0.0.1", 6379)));
	}

	private static void assertShared(LettuceConnectionFactory application) {
		assertThat(LimiterConnectionFactory.redisConfiguration(application)).isNull();
		LimiterConnectionFactory limiter = LimiterConnectionFactory.copyOf(application, REFRESH);
		assertThat(limiter.isOwnClient()).isFalse();
		assertThat(limiter.getConnectionFactory()).isSameAs(application);
	}

	@Test
	void theConfigurationIsToldByItsTypeNotByTheGetters() {
		// a standalone configuration passed as a plain RedisConfiguration: the getters see a default address
		RedisConfiguration standalone = new RedisStandaloneConfiguration("10.0.0.2", 6380);
		assertThat(LimiterConnectionFactory.redisConfiguration(new LettuceConnectionFactory(standalone)))
			.isSameAs(standalone);
		RedisStandaloneConfiguration usual = new RedisStandaloneConfiguration("10.0.0.2", 6380);
		assertThat(LimiterConnectionFactory.redisConfiguration(new LettuceConnectionFactory(usual))).isSameAs(usual);
		RedisSentinelConfiguration sentinel = new RedisSentinelConfiguration("mymaster", Set.of("10.0.0.3:26379"));
		assertThat(LimiterConnectionFactory.redisConfiguration(new LettuceConnectionFactory(sentinel)))
			.isSameAs(sentinel);
		RedisClusterConfiguration cluster = new RedisClusterConfiguration(List.of("10.0.0.4:7000"));
		assertThat(LimiterConnectionFactory.redisConfiguration(new LettuceConnectionFactory(cluster)))
			.isSameAs(cluster);
		RedisSocketConfiguration socket = new RedisSocketConfiguration("/tmp/redis.sock");
		assertThat(LimiterConnectionFactory.redisConfiguration(new LettuceConnectionFactory(socket)))
			.isSameAs(socket);
		// the copy of a standalone configuration passed as a plain one connects where it says
		LettuceConnectionFactory copy = (LettuceConnectionFactory) LimiterConnectionFactory
			.copyOf(new LettuceConnectionFactory(standalone), REFRESH)
			.getConnectionFactory();
		assertThat(copy.getHostName()).isEqualTo("10.0.0.2");
		assertThat(copy.getPort()).isEqualTo(6380);
	}

}
