package io.github.ratelimit.gateway.autoconfigure;

import io.github.ratelimit.gateway.actuate.RateLimitsEndpoint;
import io.github.ratelimit.gateway.actuate.RateLimitsEndpointProperties;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitRoutes;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Registers the {@code ratelimits} actuator endpoint ({@link RateLimitsEndpoint}) when Spring Boot Actuator is
 * present, the limiter is configured and the endpoint is available (access not {@code none}, and exposed). Who may
 * look up single clients: {@link RateLimitsEndpointProperties} ({@code management.endpoint.ratelimits.*}).
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@ConditionalOnBean({ RateLimitHandler.class, DefaultLimiterChain.class })
@EnableConfigurationProperties(RateLimitsEndpointProperties.class)
public final class RateLimitEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	RateLimitsEndpoint rateLimitsEndpoint(RateLimitProperties properties, LimitResolver limits, PlanResolver plans,
			DefaultLimiterChain chain, RateLimitRoutes routes, ObjectProvider<ClientAddressResolver> addresses,
			RateLimitsEndpointProperties access, ObjectProvider<UpstreamProtections> protections) {
		// the chain's own view of the store (both scopes) and over-limit cache
		RateLimitsEndpoint endpoint = new RateLimitsEndpoint(properties, limits, plans, chain.store(), routes,
				chain.overLimitCache(), access, protections.getIfAvailable(() -> UpstreamProtections.NONE));
		addresses.ifAvailable(endpoint::setClientAddressResolver);
		return endpoint;
	}

}
