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
 * <p>Lettuce's reconnect attempts back off to at most 1 s (instead of 30 s), standalone, Sentinel or Cluster: while
 * a connection is down its commands are rejected and checks use the local fallback, so the reconnect delay bounds
 * how long decisions stay local after Redis is back; on a Cluster a reconnect attempt to a failed master is also what
 * triggers the adaptive refresh that finds its promoted replica.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ GatewayFilterFactory.class, ClusterClientOptions.class,
		LettuceClientOptionsBuilderCustomizer.class })
public final class RateLimitRedisClusterAutoConfiguration {

	/** Longest wait between two reconnect attempts to a Redis node. */
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
	 * Reconnect attempts at most {@link #MAX_RECONNECT_DELAY} apart (exponential from 1 ms), whatever the Redis
	 * setup. Replace by declaring a bean of this name.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitReconnectDelay")
	ClientResourcesBuilderCustomizer rateLimitReconnectDelay() {
		return (resources) -> resources
			.reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS));
	}

}
