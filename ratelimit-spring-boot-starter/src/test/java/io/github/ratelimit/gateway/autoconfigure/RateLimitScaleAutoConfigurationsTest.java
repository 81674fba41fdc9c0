package io.github.ratelimit.gateway.autoconfigure;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import io.github.ratelimit.gateway.plan.ApiKey;
import java.time.Duration;

import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.plan.CachingPlanResolver;
import io.github.ratelimit.gateway.plan.ChainedPlanResolver;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.plan.PlanStore;
import io.github.ratelimit.gateway.plan.StaticPlanResolver;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configurations for running at scale: plan store, IPv6 prefix keying, Lettuce options and cluster topology
 * refresh (on the limiter's own client), each with {@link RateLimitAutoConfiguration} (whose defaults they replace)
 * in the same context.
 */
class RateLimitScaleAutoConfigurationsTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitPlanStoreAutoConfiguration.class, RateLimitClientAddressAutoConfiguration.class,
				RateLimitLettuceAutoConfiguration.class, RateLimitRedisClusterAutoConfiguration.class,
				RateLimitRedisConnectionAutoConfiguration.class))
		.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
				"ratelimit.plans.anonymous.default[0].refill-tokens=60",
				"ratelimit.plans.anonymous.default[0].refill-period=1m");

	@Test
	void theStaticPlanResolverStaysTheDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(PlanStore.class);
			assertThat(context).getBean(PlanResolver.class).isInstanceOf(StaticPlanResolver.class);
		});
	}

	@Test
	void typeRedisLooksPlansUpInRedisThroughTheCache() {
		this.runner.withPropertyValues("ratelimit.plan-store.type=redis").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).getBean(PlanStore.class).isInstanceOf(RedisPlanStore.class);
			assertThat(context.getBean(RedisPlanStore.class).getKeyPrefix()).isEqualTo("rl:plan:");
			assertThat(context).getBean(PlanResolver.class).isInstanceOf(CachingPlanResolver.class);
		});
	}

	@Test
	void thePlanKeyPrefixFollowsTheKeyPrefixUnlessSet() {
		this.runner.withPropertyValues("ratelimit.plan-store.type=redis", "ratelimit.key-prefix=gw")
			.run((context) -> assertThat(context.getBean(RedisPlanStore.class).getKeyPrefix()).isEqualTo("gw:plan:"));
		this.runner.withPropertyValues("ratelimit.plan-store.type=redis", "ratelimit.plan-store.key-prefix=keys:")
			.run((context) -> assertThat(context.getBean(RedisPlanStore.class).getKeyPrefix()).isEqualTo("keys:"));
	}

	@Test
	void staticApiKeysStillApplyInFrontOfTheStore() {
		this.runner.withPropertyValues("ratelimit.plan-store.type=redis", "ratelimit.api-keys.demo-key=anonymous")
			.run((context) -> {
				assertThat(context).getBean(PlanResolver.class).isInstanceOf(ChainedPlanResolver.class);
				// known statically: answered without Redis (none runs here)
				assertThat(context.getBean(PlanResolver.class).resolvePlan(ApiKey.of("demo-key")).toCompletableFuture().join()).contains("anonymous");
			});
	}

	@Test
	void anApplicationPlanResolverReplacesBoth() {
		PlanResolver own = (apiKey) -> CompletableFuture.completedFuture(Optional.empty());
		this.runner.withPropertyValues("ratelimit.plan-store.type=redis")
			.withBean(PlanResolver.class, () -> own)
			.run((context) -> {
				assertThat(context).hasSingleBean(PlanResolver.class).doesNotHaveBean(PlanStore.class);
				assertThat(context.getBean(PlanResolver.class)).isSameAs(own);
			});
	}

	@Test
	void anApplicationPlanStoreGetsTheCache() {
		PlanStore own = (keyHash) -> CompletableFuture.completedFuture(Optional.of("anonymous"));
		this.runner.withBean(PlanStore.class, () -> own).run((context) -> {
			assertThat(context).hasSingleBean(PlanStore.class);
			assertThat(context).getBean(PlanResolver.class).isInstanceOf(CachingPlanResolver.class);
			assertThat(context.getBean(PlanResolver.class).resolvePlan(ApiKey.of("any")).toCompletableFuture().join()).contains("anonymous");
		});
	}

	@Test
	void badPlanStoreSettingsStopStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.plan-store.type=redis", "ratelimit.plan-store.cache.ttl=0s",
				"ratelimit.plan-store.max-lookups-per-second=-1")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("ratelimit.plan-store.cache.ttl")
				.hasMessageContaining("ratelimit.plan-store.max-lookups-per-second"));
	}

	@Test
	void ipv6ClientsAreKeyedByASlash64UnlessConfigured() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ClientAddressResolver.class);
			assertThat(context.getBean(ClientAddressResolver.class).getIpv6PrefixLength()).isEqualTo(64);
		});
		this.runner.withPropertyValues("ratelimit.client-ip.ipv6-prefix-length=56")
			.run((context) -> assertThat(context.getBean(ClientAddressResolver.class).getIpv6PrefixLength())
				.isEqualTo(56));
	}

	@Test
	void aBadIpv6PrefixStopsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.client-ip.ipv6-prefix-length=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("ratelimit.client-ip.ipv6-prefix-length"));
	}

	@Test
	void anApplicationClientAddressResolverReplacesTheDefault() {
		ClientAddressResolver own = new ClientAddressResolver(0, 128);
		this.runner.withBean(ClientAddressResolver.class, () -> own)
			.run((context) -> assertThat(context.getBean(ClientAddressResolver.class)).isSameAs(own));
	}

	@Test
	void clusterClientsRefreshTheTopologyPeriodicallyAndAdaptivelyByDefault() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000,127.0.0.1:7001")
			.run((context) -> {
				ClusterTopologyRefreshOptions refresh = topologyRefresh(limiters(context));
				assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
				assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(10));
				assertThat(refresh.getAdaptiveRefreshTriggers()).containsExactlyInAnyOrder(RefreshTrigger.values());
				assertThat(refresh.getAdaptiveRefreshTimeout()).isEqualTo(Duration.ofSeconds(2));
				assertThat(refresh.useDynamicRefreshSources()).isTrue();
				// reconnect attempts (which trigger the adaptive refresh) at most 1 s apart
				Delay delay = reconnectDelay(limiters(context));
				assertThat(delay.createDelay(1)).isEqualTo(Duration.ofMillis(1));
				assertThat(delay.createDelay(30)).isEqualTo(Duration.ofSeconds(1));
				// the application's client keeps Boot's settings
				assertThat(topologyRefresh(context.getBean(LettuceConnectionFactory.class)).isPeriodicRefreshEnabled())
					.isFalse();
			});
	}

	@Test
	void clusterNodesAsAYamlListCountToo() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes[0]=127.0.0.1:7000",
				"spring.data.redis.cluster.nodes[1]=127.0.0.1:7001")
			.run((context) -> assertThat(topologyRefresh(limiters(context)).isPeriodicRefreshEnabled()).isTrue());
	}

	@Test
	void bootsTopologyRefreshPropertiesWin() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000",
				"spring.data.redis.lettuce.cluster.refresh.period=10s",
				"spring.data.redis.lettuce.cluster.refresh.adaptive=false",
				"spring.data.redis.lettuce.cluster.refresh.dynamic-refresh-sources=false")
			.run((context) -> {
				ClusterTopologyRefreshOptions refresh = topologyRefresh(limiters(context));
				assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(10));
				assertThat(refresh.getAdaptiveRefreshTriggers()).isEmpty();
				assertThat(refresh.useDynamicRefreshSources()).isFalse();
			});
	}

	@Test
	void standaloneClientsGetNoClusterOptionsButTheReconnectCap() {
		ClientOptions.Builder builder = ClientOptions.builder();
		new ClusterTopologyRefreshCustomizer(Duration.ofSeconds(30), true, true).customize(builder);
		assertThat(builder.build()).isNotInstanceOf(ClusterClientOptions.class);
		this.runner.run((context) -> {
			assertThat(limiters(context).getClientConfiguration().getClientOptions()).get()
				.isNotInstanceOf(ClusterClientOptions.class);
			// reconnect attempts at most 1 s apart here too: decisions come back from Redis within about 1 s of it
			assertThat(reconnectDelay(limiters(context)).createDelay(30)).isEqualTo(Duration.ofSeconds(1));
		});
	}

	private static LettuceConnectionFactory limiters(AssertableApplicationContext context) {
		LimiterConnectionFactory limiter = context.getBean(LimiterConnectionFactory.class);
		assertThat(limiter.isOwnClient()).isTrue();
		return (LettuceConnectionFactory) limiter.getConnectionFactory();
	}

	private static Delay reconnectDelay(LettuceConnectionFactory factory) {
		return factory.getClientConfiguration().getClientResources().orElseThrow().reconnectDelay();
	}

	private static ClusterTopologyRefreshOptions topologyRefresh(LettuceConnectionFactory factory) {
		ClientOptions options = factory.getClientConfiguration().getClientOptions().orElseThrow();
		assertThat(options).isInstanceOf(ClusterClientOptions.class);
		return ((ClusterClientOptions) options).getTopologyRefreshOptions();
	}

}
