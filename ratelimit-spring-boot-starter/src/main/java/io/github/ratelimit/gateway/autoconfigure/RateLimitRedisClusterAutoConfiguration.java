package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import io.lettuce.core.cluster.ClusterClientOptions;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Binder;
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
 * <p>Cluster only: the Lettuce options of every Redis setup (reconnect delay, commands rejected while disconnected)
 * are {@link RateLimitLettuceAutoConfiguration}'s; its 1 s reconnect cap matters here too, as a reconnect attempt to
 * a failed master is what triggers the adaptive refresh that finds its promoted replica.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ GatewayFilterFactory.class, ClusterClientOptions.class,
		LettuceClientOptionsBuilderCustomizer.class })
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
public final class RateLimitRedisClusterAutoConfiguration {

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

}
