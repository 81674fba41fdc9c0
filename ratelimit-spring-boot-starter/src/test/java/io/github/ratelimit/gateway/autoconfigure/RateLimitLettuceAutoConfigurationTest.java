package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitLettuceAutoConfiguration}, with {@code ratelimit.redis.configure-application-client=true} (the
 * limiter's Lettuce settings on the application's own client, as before the limiter had one of its own): with every
 * Redis setup, commands are rejected while disconnected and reconnect attempts are at most 1 s apart; the cluster
 * auto-configuration adds only topology refresh. Without the property neither touches the application's client.
 */
class RateLimitLettuceAutoConfigurationTest {

	private static final String OPT_IN = "ratelimit.redis.configure-application-client=true";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, RateLimitLettuceAutoConfiguration.class))
		.withPropertyValues(OPT_IN);

	@Test
	void withoutTheOptInNeitherCustomisesTheApplicationsClient() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisReactiveAutoConfiguration.class, RateLimitLettuceAutoConfiguration.class,
					RateLimitRedisClusterAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000",
					"ratelimit.redis.configure-application-client=false")
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean("rateLimitRejectCommandsWhenDisconnected")
					.doesNotHaveBean("rateLimitReconnectDelay")
					.doesNotHaveBean("rateLimitClusterTopologyRefresh");
				ClientOptions options = clientOptions(context.getBean(LettuceConnectionFactory.class));
				assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
				assertThat(((ClusterClientOptions) options).getTopologyRefreshOptions().isPeriodicRefreshEnabled())
					.isFalse();
				assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(30))
					.isEqualTo(Duration.ofSeconds(30));
			});
	}

	@Test
	void standaloneClientsRejectCommandsWhileDisconnectedAndReconnectWithinOneSecond() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasBean("rateLimitRejectCommandsWhenDisconnected")
				.hasBean("rateLimitReconnectDelay");
			ClientOptions options = clientOptions(context.getBean(LettuceConnectionFactory.class));
			assertThat(options).isNotInstanceOf(ClusterClientOptions.class);
			assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
			Delay delay = context.getBean(ClientResources.class).reconnectDelay();
			assertThat(delay.createDelay(1)).isEqualTo(Duration.ofMillis(1));
			assertThat(delay.createDelay(30)).isEqualTo(Duration.ofSeconds(1));
		});
	}

	@Test
	void clusterClientsRejectCommandsWhileDisconnectedTooWithoutTheClusterAutoConfiguration() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000,127.0.0.1:7001")
			.run((context) -> {
				ClientOptions options = clientOptions(context.getBean(LettuceConnectionFactory.class));
				assertThat(options).isInstanceOf(ClusterClientOptions.class);
				assertThat(options.getDisconnectedBehavior())
					.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
				// topology refresh is the cluster auto-configuration's, absent here
				assertThat(((ClusterClientOptions) options).getTopologyRefreshOptions().isPeriodicRefreshEnabled())
					.isFalse();
				assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(30))
					.isEqualTo(Duration.ofSeconds(1));
			});
	}

	@Test
	void theClusterAutoConfigurationAloneSetsNoLettuceOptions() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisReactiveAutoConfiguration.class, RateLimitRedisClusterAutoConfiguration.class))
			.withPropertyValues(OPT_IN)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean("rateLimitRejectCommandsWhenDisconnected")
					.doesNotHaveBean("rateLimitReconnectDelay")
					.hasBean("rateLimitClusterTopologyRefresh");
				assertThat(clientOptions(context.getBean(LettuceConnectionFactory.class)).getDisconnectedBehavior())
					.isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
			});
	}

	@Test
	void beansOfTheSameNamesReplaceThem() {
		LettuceClientOptionsBuilderCustomizer queue = (options) -> options
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS);
		ClientResourcesBuilderCustomizer slow = (resources) -> resources.reconnectDelay(Delay.constant(Duration.ofSeconds(5)));
		this.runner.withBean("rateLimitRejectCommandsWhenDisconnected", LettuceClientOptionsBuilderCustomizer.class, () -> queue)
			.withBean("rateLimitReconnectDelay", ClientResourcesBuilderCustomizer.class, () -> slow)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(clientOptions(context.getBean(LettuceConnectionFactory.class)).getDisconnectedBehavior())
					.isEqualTo(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS);
				assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(30))
					.isEqualTo(Duration.ofSeconds(5));
			});
	}

	private static ClientOptions clientOptions(LettuceConnectionFactory factory) {
		return factory.getClientConfiguration().getClientOptions().orElseThrow();
	}

}
