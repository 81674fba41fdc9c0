package io.github.ratelimit.gateway.autoconfigure;

import io.github.ratelimit.gateway.actuate.RateLimiterHealthIndicator;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.redis.InstanceCounter;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Registers the {@code rateLimiter} health component ({@link RateLimiterHealthIndicator}, with the upstream
 * protections) when Spring Boot's health support is present and the limiter is configured.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@ConditionalOnBean({ DefaultLimiterChain.class, InstanceCounter.class })
public final class RateLimitHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "rateLimiterHealthIndicator")
	RateLimiterHealthIndicator rateLimiterHealthIndicator(DefaultLimiterChain chain, InstanceCounter counter,
			ObjectProvider<UpstreamProtections> protections) {
		return new RateLimiterHealthIndicator(chain.fallbackMode(), chain.circuitBreakers(), counter,
				protections.getIfAvailable(() -> UpstreamProtections.NONE));
	}

}
