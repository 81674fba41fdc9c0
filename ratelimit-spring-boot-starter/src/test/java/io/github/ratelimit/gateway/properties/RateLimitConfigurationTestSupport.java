package io.github.ratelimit.gateway.properties;

import java.time.Duration;

import io.github.ratelimit.gateway.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.gateway.autoconfigure.RateLimitWebFluxAutoConfiguration;
import io.github.ratelimit.gateway.limits.LimitScope;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the configuration tests share: contexts of {@link RateLimitAutoConfiguration} with Gateway's route
 * properties bound, base configurations, the start-up failure's message, and limits built in code.
 */
public final class RateLimitConfigurationTestSupport {

	/** The anonymous plan (60 per minute) and plan {@code free} (20, 10 per second). */
	public static final String[] ANONYMOUS_AND_FREE = { "ratelimit.plans.anonymous.default[0].capacity=60",
			"ratelimit.plans.anonymous.default[0].refill-tokens=60",
			"ratelimit.plans.anonymous.default[0].refill-period=1m", "ratelimit.plans.free.default[0].capacity=20",
			"ratelimit.plans.free.default[0].refill-tokens=10", "ratelimit.plans.free.default[0].refill-period=1s" };

	/**
	 * {@link #ANONYMOUS_AND_FREE}, plan {@code free} giving group {@code search} 5 tokens (1 per second), an API key
	 * of plan {@code free}, and route {@code search} with {@code RateLimit=search}.
	 */
	public static final String[] PLANS_AND_ROUTE = concat(ANONYMOUS_AND_FREE,
			"ratelimit.plans.free.groups.search[0].capacity=5", "ratelimit.plans.free.groups.search[0].refill-tokens=1",
			"ratelimit.plans.free.groups.search[0].refill-period=1s", "ratelimit.api-keys.demo-free-key=free",
			"spring.cloud.gateway.server.webflux.routes[0].id=search",
			"spring.cloud.gateway.server.webflux.routes[0].uri=no://op",
			"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/search/**",
			"spring.cloud.gateway.server.webflux.routes[0].filters[0]=RateLimit=search");

	/**
	 * The anonymous plan, and plan {@code free} whose group {@code search} has a client limit (5, 1 per second) and
	 * a global one (1000, 500 per second).
	 */
	public static final String[] FREE_WITH_GLOBAL_SEARCH = { "ratelimit.plans.anonymous.default[0].capacity=60",
			"ratelimit.plans.anonymous.default[0].refill-tokens=60",
			"ratelimit.plans.anonymous.default[0].refill-period=1m",
			"ratelimit.plans.free.groups.search[0].capacity=5",
			"ratelimit.plans.free.groups.search[0].refill-tokens=1",
			"ratelimit.plans.free.groups.search[0].refill-period=1s",
			"ratelimit.plans.free.groups.search[1].capacity=1000",
			"ratelimit.plans.free.groups.search[1].refill-tokens=500",
			"ratelimit.plans.free.groups.search[1].refill-period=1s",
			"ratelimit.plans.free.groups.search[1].scope=global", "ratelimit.plans.free.default[0].capacity=20",
			"ratelimit.plans.free.default[0].refill-tokens=10", "ratelimit.plans.free.default[0].refill-period=1s" };

	private RateLimitConfigurationTestSupport() {
	}

	/**
	 * A context runner of {@link RateLimitAutoConfiguration} (no Redis) with Gateway's route properties bound.
	 * @param properties the configuration, e.g. {@link #PLANS_AND_ROUTE}
	 * @return the runner
	 */
	public static ReactiveWebApplicationContextRunner runner(String... properties) {
		return new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class))
			.withUserConfiguration(GatewayRoutes.class)
			.withPropertyValues(properties);
	}

	/**
	 * The message of the {@link RateLimitConfigurationException} that stopped the context, asserting there is one.
	 * @param context a context that failed to start
	 * @return the message, one line per violation
	 */
	public static String failure(ApplicationContextAssertProvider<?> context) {
		assertThat(context).hasFailed();
		Throwable cause = context.getStartupFailure();
		while (cause != null && !(cause instanceof RateLimitConfigurationException)) {
			cause = cause.getCause();
		}
		assertThat(cause).as("a RateLimitConfigurationException in %s", context.getStartupFailure()).isNotNull();
		return cause.getMessage();
	}

	/**
	 * The messages of a failure and all its causes, one per line (for failures of binding, before validation).
	 * @param failure the failure
	 * @return the messages
	 */
	public static String messages(Throwable failure) {
		StringBuilder text = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			text.append(t.getMessage()).append('\n');
		}
		return text.toString();
	}

	/**
	 * A limit as bound from configuration (algorithm and scope left at their defaults).
	 * @param capacity tokens
	 * @param refillTokens tokens per period
	 * @param period the refill period
	 * @return the limit
	 */
	public static RateLimitProperties.Limit limit(long capacity, long refillTokens, Duration period) {
		RateLimitProperties.Limit limit = new RateLimitProperties.Limit();
		limit.setCapacity(capacity);
		limit.setRefillTokens(refillTokens);
		limit.setRefillPeriod(period);
		return limit;
	}

	/**
	 * A limit of {@code capacity} tokens per second with a scope.
	 * @param capacity tokens, also refilled per second
	 * @param scope the scope
	 * @return the limit
	 */
	public static RateLimitProperties.Limit limit(long capacity, LimitScope scope) {
		RateLimitProperties.Limit limit = limit(capacity, capacity, Duration.ofSeconds(1));
		limit.setScope(scope);
		return limit;
	}

	private static String[] concat(String[] first, String... more) {
		String[] all = new String[first.length + more.length];
		System.arraycopy(first, 0, all, 0, first.length);
		System.arraycopy(more, 0, all, first.length, more.length);
		return all;
	}

	/** Gateway's route properties, as Gateway's auto-configuration binds them. */
	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(GatewayProperties.class)
	static class GatewayRoutes {

	}

}
