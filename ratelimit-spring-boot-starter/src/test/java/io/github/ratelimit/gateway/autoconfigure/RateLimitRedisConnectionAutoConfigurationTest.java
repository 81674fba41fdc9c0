package io.github.ratelimit.gateway.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;

import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.redis.InstanceCounter;
import io.github.ratelimit.gateway.redis.LettuceScriptExecutor;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.github.ratelimit.test.redis.TestCertificates;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.ReadFrom;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mockito.Mockito;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.test.util.ReflectionTestUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitRedisConnectionAutoConfiguration}: by default the limiter's Redis users get a Lettuce client of
 * their own, copied from the application's factory with the limiter's settings (commands rejected while
 * disconnected, reconnects at most 1 s apart, Cluster topology refresh), while the application's factory, its
 * {@code ClientResources} and so its templates keep Spring Boot's settings.
 */
class RateLimitRedisConnectionAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, RateLimitLettuceAutoConfiguration.class,
				RateLimitRedisClusterAutoConfiguration.class, RateLimitRedisConnectionAutoConfiguration.class));

	@Test
	void theApplicationsClientKeepsBootsLettuceSettings() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean("rateLimitRejectCommandsWhenDisconnected")
				.doesNotHaveBean("rateLimitReconnectDelay")
				.doesNotHaveBean("rateLimitClusterTopologyRefresh");
			LettuceConnectionFactory application = context.getBean(LettuceConnectionFactory.class);
			assertThat(clientOptions(application).getDisconnectedBehavior())
				.isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
			// Lettuce's default reconnect delay: exponential up to 30 s
			assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(30))
				.isEqualTo(Duration.ofSeconds(30));
			// the application's template is on the application's factory
			assertThat(context.getBean(ReactiveStringRedisTemplate.class).getConnectionFactory()).isSameAs(application);
		});
	}

	@Test
	void theLimitersOwnClientRejectsCommandsWhileDisconnectedAndReconnectsWithinOneSecond() {
		this.runner.run((context) -> {
			LimiterConnectionFactory limiter = context.getBean(LimiterConnectionFactory.class);
			assertThat(limiter.isOwnClient()).isTrue();
			LettuceConnectionFactory own = own(context);
			assertThat(own).isNotSameAs(context.getBean(LettuceConnectionFactory.class));
			ClientOptions options = clientOptions(own);
			assertThat(options).isNotInstanceOf(ClusterClientOptions.class);
			assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
			ClientResources resources = own.getClientConfiguration().getClientResources().orElseThrow();
			assertThat(resources.reconnectDelay().createDelay(1)).isEqualTo(Duration.ofMillis(1));
			assertThat(resources.reconnectDelay().createDelay(30)).isEqualTo(Duration.ofSeconds(1));
			// the application's threads and timer, not threads of its own
			ClientResources application = context.getBean(ClientResources.class);
			assertThat(resources).isNotSameAs(application);
			assertThat(resources.eventLoopGroupProvider()).isSameAs(application.eventLoopGroupProvider());
			assertThat(resources.eventExecutorGroup()).isSameAs(application.eventExecutorGroup());
			assertThat(resources.timer()).isSameAs(application.timer());
		});
	}

	@Test
	void theLimitersCopyReachesTheSameRedisTheSameWay(@TempDir Path dir) {
		TestCertificates certificates = TestCertificates.create(dir);
		this.runner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=redis.example", "spring.data.redis.port=6390",
					"spring.data.redis.database=3", "spring.data.redis.username=app-user",
					"spring.data.redis.password=app-secret", "spring.data.redis.client-name=orders-gateway",
					"spring.data.redis.timeout=3s", "spring.data.redis.connect-timeout=750ms",
					"spring.data.redis.lettuce.read-from=replica-preferred",
					"spring.data.redis.lettuce.shutdown-timeout=250ms", "spring.data.redis.ssl.enabled=true",
					"spring.data.redis.ssl.bundle=managed",
					"spring.ssl.bundle.pem.managed.truststore.certificate=file:" + certificates.caCertificate())
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LettuceConnectionFactory application = context.getBean(LettuceConnectionFactory.class);
				LettuceConnectionFactory own = own(context);
				RedisStandaloneConfiguration standalone = own.getStandaloneConfiguration();
				assertThat(standalone.getHostName()).isEqualTo("redis.example");
				assertThat(standalone.getPort()).isEqualTo(6390);
				assertThat(standalone.getDatabase()).isEqualTo(3);
				assertThat(standalone.getUsername()).isEqualTo("app-user");
				assertThat(standalone.getPassword()).isEqualTo(application.getStandaloneConfiguration().getPassword());
				LettuceClientConfiguration client = own.getClientConfiguration();
				assertThat(client.isUseSsl()).isTrue();
				assertThat(client.getVerifyMode()).isEqualTo(SslVerifyMode.FULL);
				assertThat(client.getClientName()).contains("orders-gateway");
				assertThat(client.getCommandTimeout()).isEqualTo(Duration.ofSeconds(3));
				assertThat(client.getReadFrom()).contains(ReadFrom.REPLICA_PREFERRED);
				assertThat(client.getShutdownTimeout()).isEqualTo(Duration.ofMillis(250));
				ClientOptions options = clientOptions(own);
				ClientOptions applicationOptions = clientOptions(application);
				// the SSL options Boot made from the bundle (its trust manager), the socket and timeout options
				assertThat(options.getSslOptions()).isSameAs(applicationOptions.getSslOptions());
				assertThat(options.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofMillis(750));
				// the application's timeouts, script commands waited for at least MIN_SCRIPT_REPLY_TIMEOUT
				assertThat(options.getTimeoutOptions().isTimeoutCommands()).isTrue();
				assertThat(options.getTimeoutOptions().getSource().getTimeUnit()
					.toMillis(options.getTimeoutOptions().getSource().getTimeout(new io.lettuce.core.protocol.Command<>(
							io.lettuce.core.protocol.CommandType.EVALSHA, null))))
					.isEqualTo(LimiterConnectionFactory.MIN_SCRIPT_REPLY_TIMEOUT.toMillis());
				assertThat(options.getTimeoutOptions().getSource().getTimeUnit()
					.toMillis(options.getTimeoutOptions().getSource().getTimeout(new io.lettuce.core.protocol.Command<>(
							io.lettuce.core.protocol.CommandType.GET, null))))
					.isEqualTo(3000);
				assertThat(options.getDisconnectedBehavior())
					.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
				assertThat(own.toString()).doesNotContain("app-secret");
				assertThat(context.getBean(LimiterConnectionFactory.class).toString()).doesNotContain("app-secret")
					.contains("standalone");
			});
	}

	@Test
	void onAClusterOnlyTheLimitersClientRefreshesTheTopology() {
		this.runner
			.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000,127.0.0.1:7001",
					"spring.data.redis.cluster.max-redirects=7")
			.run((context) -> {
				ClusterClientOptions application = (ClusterClientOptions) clientOptions(
						context.getBean(LettuceConnectionFactory.class));
				assertThat(application.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
				assertThat(application.getTopologyRefreshOptions().isPeriodicRefreshEnabled()).isFalse();
				assertThat(application.getTopologyRefreshOptions().getAdaptiveRefreshTriggers()).isEmpty();
				LettuceConnectionFactory own = own(context);
				assertThat(own.getClusterConfiguration().getMaxRedirects()).isEqualTo(7);
				assertThat(own.getClusterConfiguration().getClusterNodes()).hasSize(2);
				ClientOptions options = clientOptions(own);
				assertThat(options).isInstanceOf(ClusterClientOptions.class);
				assertThat(options.getDisconnectedBehavior())
					.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
				ClusterTopologyRefreshOptions refresh = ((ClusterClientOptions) options).getTopologyRefreshOptions();
				assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
				assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(10));
				assertThat(refresh.getAdaptiveRefreshTriggers()).containsExactlyInAnyOrder(RefreshTrigger.values());
				assertThat(refresh.getAdaptiveRefreshTimeout()).isEqualTo(Duration.ofSeconds(2));
				assertThat(refresh.useDynamicRefreshSources()).isTrue();
				assertThat(own.getClientConfiguration().getClientResources().orElseThrow().reconnectDelay()
					.createDelay(30)).isEqualTo(Duration.ofSeconds(1));
				assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(30))
					.isEqualTo(Duration.ofSeconds(30));
			});
	}

	@Test
	void bootsTopologyRefreshPropertiesWinOnTheLimitersClient() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000",
				"spring.data.redis.lettuce.cluster.refresh.period=30s",
				"spring.data.redis.lettuce.cluster.refresh.adaptive=false",
				"spring.data.redis.lettuce.cluster.refresh.dynamic-refresh-sources=false")
			.run((context) -> {
				ClusterTopologyRefreshOptions refresh = ((ClusterClientOptions) clientOptions(own(context)))
					.getTopologyRefreshOptions();
				assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(30));
				assertThat(refresh.getAdaptiveRefreshTriggers()).isEmpty();
				assertThat(refresh.useDynamicRefreshSources()).isFalse();
			});
	}

	@Test
	void aSentinelSetupIsCopiedToo() {
		this.runner
			.withPropertyValues("spring.data.redis.sentinel.master=mymaster",
					"spring.data.redis.sentinel.nodes=127.0.0.1:26379,127.0.0.1:26380",
					"spring.data.redis.sentinel.password=sentinel-secret", "spring.data.redis.password=app-secret",
					"spring.data.redis.database=2")
			.run((context) -> {
				LettuceConnectionFactory own = own(context);
				assertThat(own.getSentinelConfiguration())
					.isSameAs(context.getBean(LettuceConnectionFactory.class).getSentinelConfiguration());
				assertThat(own.getSentinelConfiguration().getMaster().getName()).isEqualTo("mymaster");
				assertThat(own.getDatabase()).isEqualTo(2);
				assertThat(clientOptions(own).getDisconnectedBehavior())
					.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
			});
	}

	@Test
	void aStaticMasterReplicaSetupSharesTheApplicationsFactory() {
		this.runner.withPropertyValues("spring.data.redis.masterreplica.nodes=127.0.0.1:6379,127.0.0.1:6380")
			.run((context) -> {
				LimiterConnectionFactory limiter = context.getBean(LimiterConnectionFactory.class);
				assertThat(limiter.isOwnClient()).isFalse();
				assertThat(limiter.getConnectionFactory()).isSameAs(context.getBean(LettuceConnectionFactory.class));
			});
	}

	@Test
	void aFactoryThatIsNotLettucesIsShared() {
		ReactiveRedisConnectionFactory other = Mockito.mock(ReactiveRedisConnectionFactory.class);
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitRedisConnectionAutoConfiguration.class))
			.withBean(ReactiveRedisConnectionFactory.class, () -> other)
			.run((context) -> {
				LimiterConnectionFactory limiter = context.getBean(LimiterConnectionFactory.class);
				assertThat(limiter.isOwnClient()).isFalse();
				assertThat(limiter.getConnectionFactory()).isSameAs(other);
			});
	}

	@Test
	void withTheOptInTheLimiterSharesTheApplicationsClientWhichGetsItsSettings() {
		this.runner.withPropertyValues("ratelimit.redis.configure-application-client=true").run((context) -> {
			LimiterConnectionFactory limiter = context.getBean(LimiterConnectionFactory.class);
			LettuceConnectionFactory application = context.getBean(LettuceConnectionFactory.class);
			assertThat(limiter.isOwnClient()).isFalse();
			assertThat(limiter.getConnectionFactory()).isSameAs(application);
			assertThat(clientOptions(application).getDisconnectedBehavior())
				.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
			assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(30))
				.isEqualTo(Duration.ofSeconds(1));
		});
	}

	@Test
	void anOptInOtherThanTrueOrFalseStopsStartUpNamingTheProperty() {
		// "yes" would bind as true but not match the conditions that customise the application's client
		this.runner.withPropertyValues("ratelimit.redis.configure-application-client=yes")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("ratelimit.redis.configure-application-client")
				.hasMessageContaining("must be true or false"));
	}

	@Test
	void theLimitersRedisUsersAllGoThroughItsOwnClient() {
		this.runner
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitPlanStoreAutoConfiguration.class))
			.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
					"ratelimit.plans.anonymous.default[0].refill-tokens=60",
					"ratelimit.plans.anonymous.default[0].refill-period=1m", "ratelimit.plan-store.type=redis")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LettuceConnectionFactory own = own(context);
				assertThat(template(context.getBean(RedisPlanStore.class)).getConnectionFactory()).isSameAs(own);
				// the store's and the heartbeats' script connections: opened from the factory's native client
				// (LettuceScriptExecutor)
				Object executor = ReflectionTestUtils.getField(context.getBean("rateLimitStore"),
						"executor");
				Object connection = ReflectionTestUtils.getField(executor, "connection");
				assertThat(ReflectionTestUtils.getField(connection, "connectionFactory")).isSameAs(own);
				Object heartbeats = ReflectionTestUtils.getField(context.getBean(InstanceCounter.class), "redis");
				assertThat(heartbeats).isInstanceOf(LettuceScriptExecutor.class);
				Object heartbeatConnection = ReflectionTestUtils.getField(heartbeats, "connection");
				assertThat(ReflectionTestUtils.getField(heartbeatConnection, "connectionFactory")).isSameAs(own);
			});
	}

	@Test
	void anApplicationBeanReplacesIt() {
		ReactiveRedisConnectionFactory other = Mockito.mock(ReactiveRedisConnectionFactory.class);
		LimiterConnectionFactory mine = LimiterConnectionFactory.sharing(other);
		this.runner.withBean(LimiterConnectionFactory.class, () -> mine)
			.run((context) -> assertThat(context.getBean(LimiterConnectionFactory.class)).isSameAs(mine));
	}

	private static LettuceConnectionFactory own(AssertableApplicationContext context) {
		LimiterConnectionFactory limiter = context.getBean(LimiterConnectionFactory.class);
		assertThat(limiter.isOwnClient()).as("the limiter has a client of its own").isTrue();
		return (LettuceConnectionFactory) limiter.getConnectionFactory();
	}

	private static ClientOptions clientOptions(LettuceConnectionFactory factory) {
		return factory.getClientConfiguration().getClientOptions().orElseThrow();
	}

	private static ReactiveStringRedisTemplate template(Object user) {
		return (ReactiveStringRedisTemplate) ReflectionTestUtils.getField(user, "redis");
	}

}
