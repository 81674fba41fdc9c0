package io.github.ratelimit.gateway.autoconfigure;

import io.github.ratelimit.gateway.webflux.DisabledRateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.properties.RateLimitProperties;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.context.annotation.Bean;

/**
 * The starter switched off ({@code ratelimit.enabled=false}): every other auto-configuration of the starter backs
 * off (no limiter, no Redis connection, no Lettuce options, no path check, no health component, no endpoint), and
 * this one registers the one bean routes need to start, a {@code RateLimit} filter that lets every request pass
 * ({@link DisabledRateLimitGatewayFilterFactory}, which logs one WARN at start-up naming those routes).
 */
@AutoConfiguration(afterName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass(GatewayFilterFactory.class)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, havingValue = false)
public final class RateLimitDisabledAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DisabledRateLimitGatewayFilterFactory rateLimitGatewayFilterFactory(ObjectProvider<GatewayProperties> gateway) {
		return new DisabledRateLimitGatewayFilterFactory(gateway.getIfAvailable());
	}

}
