package io.github.ratelimit.gateway.autoconfigure;

import java.util.List;

import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.properties.ClientIpProperties;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.properties.RateLimitProperties;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Auto-configuration of the {@link ClientAddressResolver} with {@code ratelimit.trusted-proxies} and the IPv6 prefix
 * of {@code ratelimit.client-ip.ipv6-prefix-length}. Runs before {@link RateLimitAutoConfiguration}, whose default
 * resolver then backs off; an application's own {@link ClientAddressResolver} bean replaces it.
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class)
@ConditionalOnClass(ReactiveStringRedisTemplate.class)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@EnableConfigurationProperties({ RateLimitProperties.class, ClientIpProperties.class })
public final class RateLimitClientAddressAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ClientAddressResolver rateLimitClientAddressResolver(RateLimitProperties properties,
			ClientIpProperties clientIpProperties) {
		List<ConfigurationViolation> violations = clientIpProperties.validate();
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		return new ClientAddressResolver(properties.getTrustedProxies(), clientIpProperties.getIpv6PrefixLength());
	}

}
