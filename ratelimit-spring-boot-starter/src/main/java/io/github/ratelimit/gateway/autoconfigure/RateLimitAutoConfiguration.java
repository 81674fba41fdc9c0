package io.github.ratelimit.gateway.autoconfigure;

import java.util.List;

import io.github.ratelimit.gateway.config.RateLimitConfigurationValidator;
import io.github.ratelimit.gateway.config.RateLimitProperties;
import io.github.ratelimit.gateway.filter.RateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.key.ClientAddressResolver;
import io.github.ratelimit.gateway.key.ClientKeyResolver;
import io.github.ratelimit.gateway.key.DefaultClientKeyResolver;
import io.github.ratelimit.gateway.key.PlanResolver;
import io.github.ratelimit.gateway.key.StaticPlanResolver;
import io.github.ratelimit.gateway.limit.LimitResolver;
import io.github.ratelimit.gateway.limiter.ClientRateLimiter;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisTokenBucketRateLimiter;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Auto-configuration of the {@code RateLimit} gateway filter and the Redis token bucket limiter behind it.
 *
 * <p>Active when Spring Cloud Gateway (server, WebFlux) and reactive Spring Data Redis are on the class path and a
 * {@link ReactiveRedisConnectionFactory} exists. Every bean can be replaced by declaring one of the same type. The
 * starter defines none of Gateway's own {@code RateLimiter}/{@code KeyResolver} types, so it never clashes with
 * Gateway's {@code RequestRateLimiter} beans.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
		"org.springframework.cloud.gateway.config.GatewayAutoConfiguration" })
@ConditionalOnClass({ GatewayFilterFactory.class, ReactiveStringRedisTemplate.class })
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LimitResolver rateLimitLimitResolver(RateLimitProperties properties,
			ObjectProvider<GatewayProperties> gatewayProperties) {
		RateLimitConfigurationValidator.validate(properties, gatewayProperties.getIfAvailable());
		return new LimitResolver(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	PlanResolver rateLimitPlanResolver(RateLimitProperties properties) {
		return new StaticPlanResolver(properties.getApiKeys());
	}

	@Bean
	@ConditionalOnMissingBean
	ClientAddressResolver rateLimitClientAddressResolver(RateLimitProperties properties) {
		return new ClientAddressResolver(properties.getTrustedProxies());
	}

	@Bean
	@ConditionalOnMissingBean
	ClientKeyResolver rateLimitClientKeyResolver(RateLimitProperties properties, PlanResolver planResolver,
			ClientAddressResolver addressResolver) {
		return new DefaultClientKeyResolver(properties.getApiKeyHeader(), properties.getAnonymousPlan(), planResolver,
				addressResolver);
	}

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitTokenBucketScript")
	RedisScript<List<Long>> rateLimitTokenBucketScript() {
		return RedisTokenBucketRateLimiter.tokenBucketScript();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
	ClientRateLimiter rateLimitClientRateLimiter(ReactiveRedisConnectionFactory connectionFactory,
			RedisScript<List<Long>> rateLimitTokenBucketScript, RateLimitProperties properties) {
		return new RedisTokenBucketRateLimiter(new ReactiveStringRedisTemplate(connectionFactory),
				rateLimitTokenBucketScript, new BucketKeys(properties.getKeyPrefix()));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ClientRateLimiter.class)
	RateLimitGatewayFilterFactory rateLimitGatewayFilterFactory(RateLimitProperties properties,
			LimitResolver limitResolver, ClientKeyResolver clientKeyResolver, ClientRateLimiter limiter) {
		return new RateLimitGatewayFilterFactory(properties, limitResolver, clientKeyResolver, limiter);
	}

}
