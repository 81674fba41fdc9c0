package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.resource.Delay;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.context.annotation.Bean;

/**
 * Lettuce options the rate limiter needs with every Redis setup (standalone, Sentinel or Cluster), so that checks
 * go back to Redis soon after it is reachable again and never run late:
 * <ul>
 * <li>commands are rejected while a connection is down instead of queued: a queued check would run after
 * reconnecting and consume tokens for a request the fallback already decided;</li>
 * <li>reconnect attempts back off to at most 1 s (Lettuce's default: 30 s): while a connection is down checks use
 * the local fallback, so the reconnect delay bounds how long decisions stay local after Redis is back (on a Cluster a
 * reconnect attempt to a failed master is also what triggers the adaptive topology refresh, see
 * {@link RateLimitRedisClusterAutoConfiguration}).</li>
 * </ul>
 * Both are customizers applied by Spring Boot's Lettuce connection configuration; each can be replaced by declaring
 * a bean of the same name.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ GatewayFilterFactory.class, ClientOptions.class, LettuceClientOptionsBuilderCustomizer.class })
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
public final class RateLimitLettuceAutoConfiguration {

	/** Longest wait between two reconnect attempts to a Redis node. */
	static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

	/**
	 * Lettuce rejects commands while disconnected instead of queueing them: a queued rate limit check would run
	 * after reconnecting and consume tokens for a request already decided by the fallback. Replace by declaring a
	 * bean of this name.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitRejectCommandsWhenDisconnected")
	LettuceClientOptionsBuilderCustomizer rateLimitRejectCommandsWhenDisconnected() {
		return (options) -> options.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
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
