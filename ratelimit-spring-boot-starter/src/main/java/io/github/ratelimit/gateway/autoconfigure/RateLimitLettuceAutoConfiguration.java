package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.lettuce.core.ClientOptions;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * Only with {@code ratelimit.redis.configure-application-client=true}: the Lettuce options the rate limiter needs,
 * applied to the application's own client too (Spring Session, caches, the application's templates and Gateway's
 * {@code RedisRateLimiter} included); the limiter then shares the application's client. With every Redis setup
 * (standalone, Sentinel or Cluster):
 * <ul>
 * <li>commands are rejected while a connection is down instead of queued;</li>
 * <li>reconnect attempts back off to at most 1 s (Lettuce's default: 30 s).</li>
 * </ul>
 * Both are customizers applied by Spring Boot's Lettuce connection configuration; each can be replaced by declaring
 * a bean of the same name.
 *
 * <p>By default (the property false or absent) none of this touches the application's client: the limiter's own
 * Lettuce client gets these settings ({@link LimiterConnectionFactory}, see
 * {@link RateLimitRedisConnectionAutoConfiguration}).
 */
@AutoConfiguration(beforeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({ ClientOptions.class, LettuceClientOptionsBuilderCustomizer.class })
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@ConditionalOnProperty(prefix = RateLimitProperties.Redis.PREFIX, name = "configure-application-client",
		havingValue = "true")
public final class RateLimitLettuceAutoConfiguration {

	/** Longest wait between two reconnect attempts to a Redis node. */
	static final Duration MAX_RECONNECT_DELAY = LimiterConnectionFactory.MAX_RECONNECT_DELAY;

	/**
	 * Lettuce rejects commands while disconnected instead of queueing them. Replace by declaring a bean of this name.
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
		return (resources) -> resources.reconnectDelay(LimiterConnectionFactory.reconnectDelay());
	}

}
