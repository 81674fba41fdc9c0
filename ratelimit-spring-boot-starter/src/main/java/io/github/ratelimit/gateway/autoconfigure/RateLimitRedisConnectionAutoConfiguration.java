package io.github.ratelimit.gateway.autoconfigure;

import java.util.List;

import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * The Redis connection factory of the rate limiter's own Redis users ({@link LimiterConnectionFactory}): with a
 * Lettuce {@link ReactiveRedisConnectionFactory} (Spring Boot's, or the application's own), a Lettuce client of the
 * limiter's own copied from it, with commands rejected while disconnected, reconnect attempts at most 1 s apart and,
 * on a Cluster, topology refresh (Boot's {@code spring.data.redis.lettuce.cluster.refresh.*} where set); the
 * application's client keeps Boot's settings. The application's factory itself is shared instead when it is not
 * Lettuce's, when it is a static master/replica one ({@code spring.data.redis.masterreplica.nodes}: the copy could not
 * tell its nodes), and with {@code ratelimit.redis.configure-application-client=true}, where
 * {@link RateLimitLettuceAutoConfiguration} and {@link RateLimitRedisClusterAutoConfiguration} customise the
 * application's client instead.
 *
 * <p>Runs before {@link RateLimitAutoConfiguration} and {@link RateLimitPlanStoreAutoConfiguration}, whose Redis
 * beans use it. Replace it by declaring a bean of this type.
 */
@AutoConfiguration(before = { RateLimitAutoConfiguration.class, RateLimitPlanStoreAutoConfiguration.class },
		afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
				"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration" })
@ConditionalOnClass(ReactiveStringRedisTemplate.class)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
public final class RateLimitRedisConnectionAutoConfiguration {

	/** The opt-in property: the limiter's Lettuce settings on the application's client, shared by the limiter. */
	static final String CONFIGURE_APPLICATION_CLIENT = RateLimitProperties.Redis.PREFIX
			+ ".configure-application-client";

	private static final Logger logger = LoggerFactory.getLogger(RateLimitRedisConnectionAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
	LimiterConnectionFactory rateLimitConnectionFactory(ReactiveRedisConnectionFactory connectionFactory,
			Environment environment, ObjectProvider<DataRedisConnectionDetails> connectionDetails) {
		if (configureApplicationClient(environment)
				|| !(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			return LimiterConnectionFactory.sharing(connectionFactory);
		}
		DataRedisConnectionDetails details = connectionDetails.getIfAvailable();
		if (details != null && details.getMasterReplica() != null) {
			logger.info("The rate limiter shares the application's Redis client: a static master/replica "
					+ "configuration is not copied, so the limiter's Lettuce settings (commands rejected while "
					+ "disconnected, reconnects at most {} apart) apply nowhere; set "
					+ "ratelimit.redis.configure-application-client=true to apply them to the application's client",
					LimiterConnectionFactory.MAX_RECONNECT_DELAY);
			return LimiterConnectionFactory.sharing(connectionFactory);
		}
		return LimiterConnectionFactory.copyOf(lettuce, ClusterTopologyRefreshCustomizer.fromBootProperties(environment));
	}

	/**
	 * Whether {@value #CONFIGURE_APPLICATION_CLIENT} is {@code true}, read as {@code @ConditionalOnProperty} reads
	 * it for {@link RateLimitLettuceAutoConfiguration} and {@link RateLimitRedisClusterAutoConfiguration}, so that
	 * both sides agree; a value other than {@code true} or {@code false} (such as {@code yes}, which would bind as
	 * true but not match those conditions) stops start-up.
	 * @param environment the environment
	 * @return whether the application's client gets the limiter's settings (and the limiter shares it)
	 * @throws RateLimitConfigurationException for a value other than true or false
	 */
	static boolean configureApplicationClient(Environment environment) {
		String value = environment.getProperty(CONFIGURE_APPLICATION_CLIENT);
		if (value == null || value.equalsIgnoreCase("false")) {
			return false;
		}
		if (value.equalsIgnoreCase("true")) {
			return true;
		}
		throw new RateLimitConfigurationException(List.of(new ConfigurationViolation(CONFIGURE_APPLICATION_CLIENT,
				"must be true or false, was '" + value + "'.",
				"remove it (default false: the limiter has a Redis client of its own) or set true to apply the "
						+ "limiter's Lettuce settings to the application's client too.")));
	}

}
