package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.ratelimit.gateway.plan.CachingPlanResolver;
import io.github.ratelimit.gateway.plan.ChainedPlanResolver;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.plan.PlanStore;
import io.github.ratelimit.gateway.plan.StaticPlanResolver;
import io.github.ratelimit.gateway.properties.PlanStoreProperties;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.github.ratelimit.gateway.redis.RedisPlanStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Auto-configuration of plan look-up through a {@link PlanStore} ({@code ratelimit.plan-store.*}): with
 * {@code ratelimit.plan-store.type=redis} a {@link RedisPlanStore}; with any {@link PlanStore} (the Redis one or
 * the application's own bean) a {@link CachingPlanResolver} in front of it, after the static
 * {@code ratelimit.api-keys} entries. Runs before {@link RateLimitAutoConfiguration}, whose static
 * {@link PlanResolver} then backs off. An application's own {@link PlanResolver} bean replaces both.
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class,
		afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
				"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration" })
@ConditionalOnClass({ ReactiveStringRedisTemplate.class, Caffeine.class })
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
@EnableConfigurationProperties({ RateLimitProperties.class, PlanStoreProperties.class })
public final class RateLimitPlanStoreAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(PlanResolver.class)
	@ConditionalOnBean(PlanStore.class)
	PlanResolver rateLimitCachingPlanResolver(PlanStore planStore, PlanStoreProperties planStoreProperties,
			RateLimitProperties properties) {
		validate(planStoreProperties);
		PlanStoreProperties.Cache cache = planStoreProperties.getCache();
		Duration timeout = (planStoreProperties.getTimeout() != null) ? planStoreProperties.getTimeout()
				: properties.getRedisTimeout();
		CachingPlanResolver cached = new CachingPlanResolver(planStore, properties.getPlans().keySet(),
				new CachingPlanResolver.Settings(cache.getMaxSize(), cache.getTtl(), cache.getNegativeTtl(),
						cache.getMaxStale(), timeout, planStoreProperties.getMaxLookupsPerSecond()));
		if (properties.getApiKeys().isEmpty()) {
			return cached;
		}
		return new ChainedPlanResolver(List.of(new StaticPlanResolver(properties.getApiKeys()), cached));
	}

	private static void validate(PlanStoreProperties planStoreProperties) {
		List<io.github.ratelimit.gateway.properties.ConfigurationViolation> violations = new ArrayList<>(
				planStoreProperties.validate());
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
	}

	/** The Redis plan store, when {@code ratelimit.plan-store.type=redis} and Redis is configured. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(prefix = PlanStoreProperties.PREFIX, name = "type", havingValue = "redis")
	static class RedisPlanStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean({ PlanStore.class, PlanResolver.class })
		@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
		PlanStore rateLimitRedisPlanStore(ReactiveRedisConnectionFactory connectionFactory,
				ObjectProvider<LimiterConnectionFactory> limiterConnectionFactory,
				PlanStoreProperties planStoreProperties, RateLimitProperties properties) {
			validate(planStoreProperties);
			String prefix = (planStoreProperties.getKeyPrefix() != null) ? planStoreProperties.getKeyPrefix()
					: properties.getKeyPrefix() + ":plan:";
			// the limiter's own client (commands rejected while Redis is down), else the application's
			ReactiveRedisConnectionFactory redis = RateLimitAutoConfiguration.limiterRedis(limiterConnectionFactory,
					connectionFactory);
			return new RedisPlanStore(new ReactiveStringRedisTemplate(redis), prefix);
		}

	}

}
