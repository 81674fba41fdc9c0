package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.lettuce.core.cluster.ClusterClientOptions;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Only with {@code ratelimit.redis.configure-application-client=true}: the rate limiter's Redis Cluster topology
 * refresh on the application's own client too. When the application connects to a cluster
 * ({@code spring.data.redis.cluster.nodes}) and has not configured topology refresh itself, Lettuce then refreshes
 * the cluster topology periodically (every 10 s) and on events (MOVED/ASK redirections, persistent reconnects,
 * uncovered slots, unknown nodes; at most every 2 s). Settings made under {@code spring.data.redis.lettuce.cluster.refresh.*} win. See
 * {@link ClusterTopologyRefreshCustomizer}.
 *
 * <p>By default the limiter's own Cluster client gets this refresh and the application's client keeps Spring Boot's
 * settings ({@link LimiterConnectionFactory}, {@link RateLimitRedisConnectionAutoConfiguration}). The Lettuce options
 * of every Redis setup (reconnect delay, commands rejected while disconnected) are
 * {@link RateLimitLettuceAutoConfiguration}'s, under the same property.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ ClusterClientOptions.class,
		LettuceClientOptionsBuilderCustomizer.class })
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@ConditionalOnProperty(prefix = RateLimitProperties.Redis.PREFIX, name = "configure-application-client",
		havingValue = "true")
public final class RateLimitRedisClusterAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitClusterTopologyRefresh")
	ClusterTopologyRefreshCustomizer rateLimitClusterTopologyRefresh(Environment environment) {
		return ClusterTopologyRefreshCustomizer.fromBootProperties(environment);
	}

}
