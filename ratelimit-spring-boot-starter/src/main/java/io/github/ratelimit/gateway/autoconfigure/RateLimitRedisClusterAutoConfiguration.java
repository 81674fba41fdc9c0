package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.resource.Delay;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Makes the rate limiter a good Redis Cluster citizen out of the box: when the application connects to a cluster
 * ({@code spring.data.redis.cluster.nodes}) and has not configured topology refresh itself, Lettuce refreshes the
 * cluster topology periodically (every 10 s) and on events (MOVED/ASK redirections, persistent reconnects, uncovered
 * slots, unknown nodes; at most every 2 s), so failover and resharding are followed without a restart. Settings made
 * under {@code spring.data.redis.lettuce.cluster.refresh.*} win. See {@link ClusterTopologyRefreshCustomizer}.
 *
 * <p>With {@code spring.data.redis.cluster.nodes} set, Lettuce's reconnect attempts also back off to at most 1 s
 * (instead of 30 s): a reconnect attempt to a failed master is what triggers the adaptive refresh that finds its
 * promoted replica, so this bounds how long that master's clients stay on the local fallback after a failover.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ GatewayFilterFactory.class, ClusterClientOptions.class,
		LettuceClientOptionsBuilderCustomizer.class })
public final class RateLimitRedisClusterAutoConfiguration {

	/** Longest wait between two reconnect attempts to a cluster node. */
	static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

	private static final String REFRESH = "spring.data.redis.lettuce.cluster.refresh";

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitClusterTopologyRefresh")
	ClusterTopologyRefreshCustomizer rateLimitClusterTopologyRefresh(Environment environment) {
		Binder binder = Binder.get(environment);
		BindResult<Duration> period = binder.bind(REFRESH + ".period", Duration.class);
		BindResult<Boolean> adaptive = binder.bind(REFRESH + ".adaptive", Boolean.class);
		boolean dynamicSources = binder.bind(REFRESH + ".dynamic-refresh-sources", Boolean.class).orElse(true);
		return new ClusterTopologyRefreshCustomizer(
				period.orElse(ClusterTopologyRefreshCustomizer.DEFAULT_PERIOD), adaptive.orElse(true), dynamicSources);
	}

	/**
	 * Reconnect attempts at most {@link #MAX_RECONNECT_DELAY} apart when {@code spring.data.redis.cluster.nodes} is
	 * set (in any form, YAML lists included); Lettuce's default otherwise.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitClusterReconnectDelay")
	ClientResourcesBuilderCustomizer rateLimitClusterReconnectDelay(Environment environment) {
		boolean cluster = Binder.get(environment)
			.bind("spring.data.redis.cluster.nodes", Bindable.listOf(String.class))
			.map((nodes) -> !nodes.isEmpty())
			.orElse(false);
		return (resources) -> {
			if (cluster) {
				resources.reconnectDelay(
						Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS));
			}
		};
	}

}
