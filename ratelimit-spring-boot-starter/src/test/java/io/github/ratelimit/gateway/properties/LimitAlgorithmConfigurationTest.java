package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.properties.LimitResolver;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code algorithm} of a limit: bound from configuration (relaxed names), window limits without
 * {@code refill-tokens}, and bad values stopping start-up with a message that names the property and the fix.
 */
class LimitAlgorithmConfigurationTest {

	private static final String LIMIT = "ratelimit.plans.free.groups.search[0].";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withUserConfiguration(GatewayRoutes.class)
		.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
				"ratelimit.plans.anonymous.default[0].refill-tokens=60",
				"ratelimit.plans.anonymous.default[0].refill-period=1m", "ratelimit.plans.free.default[0].capacity=20",
				"ratelimit.plans.free.default[0].refill-tokens=10", "ratelimit.plans.free.default[0].refill-period=1s");

	@Test
	void eachAlgorithmBindsAndWindowLimitsNeedNoRefillTokens() {
		this.runner.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-period=1m",
				LIMIT + "algorithm=sliding-window-log", "ratelimit.plans.free.groups.search[1].capacity=1000",
				"ratelimit.plans.free.groups.search[1].refill-tokens=1000",
				"ratelimit.plans.free.groups.search[1].refill-period=1h",
				"ratelimit.plans.free.groups.search[1].algorithm=SLIDING_WINDOW_COUNTER",
				"ratelimit.plans.free.groups.search[2].capacity=10000",
				"ratelimit.plans.free.groups.search[2].refill-period=1d",
				"ratelimit.plans.free.groups.search[2].algorithm=fixed-window")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitResolver resolver = context.getBean(LimitResolver.class);
				assertThat(resolver.limitsFor("free", "search").limits()).containsExactly(
						LimitDefinition.window("free-search-1m", Algorithm.SLIDING_WINDOW_LOG, 100, Duration.ofMinutes(1)),
						LimitDefinition.window("free-search-1h", Algorithm.SLIDING_WINDOW_COUNTER, 1000, Duration.ofHours(1)),
						LimitDefinition.window("free-search-1d", Algorithm.FIXED_WINDOW, 10000, Duration.ofDays(1)));
				// the policy's window w is the configured window
				assertThat(resolver.limitsFor("free", "search").limits()).extracting(LimitDefinition::windowSeconds)
					.containsExactly(60L, 3600L, 86400L);
				// token bucket stays the default
				assertThat(resolver.limitsFor("free", "other").limits().get(0).algorithm())
					.isEqualTo(Algorithm.TOKEN_BUCKET);
			});
	}

	@Test
	void unknownAlgorithmStopsStartUpNamingTheProperty() {
		this.runner.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-period=1s", LIMIT + "algorithm=leaky-bucket")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(LIMIT + "algorithm")
					.contains("leaky-bucket");
			});
	}

	@Test
	void windowRefillTokensOtherThanCapacityIsRefused() {
		this.runner.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-tokens=1", LIMIT + "refill-period=1s",
				LIMIT + "algorithm=fixed-window")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "refill-tokens: must equal capacity (5) or be "
					+ "left out with algorithm fixed-window, which admits capacity tokens per refill-period window; was 1.")
				.contains("remove refill-tokens (or set it to 5); for a burst larger than the rate, use algorithm: "
						+ "token-bucket."));
	}

	@Test
	void slidingLogAboveOneMillionIsRefused() {
		this.runner.withPropertyValues(LIMIT + "capacity=1000001", LIMIT + "refill-period=1h",
				LIMIT + "algorithm=sliding-window-log")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "capacity: must be at most 1,000,000 tokens with sliding-window-log")
				.contains("use algorithm: sliding-window-counter"));
	}

	@Test
	void tokenBucketStillNeedsRefillTokens() {
		this.runner.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-period=1s")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "refill-tokens: must be between 1 and 2^53"));
	}

	@Test
	void emptyAlgorithmKeepsTheTokenBucket() {
		this.runner.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-tokens=1", LIMIT + "refill-period=1s",
				LIMIT + "algorithm=")
			.run((context) -> assertThat(context.getBean(LimitResolver.class).limitsFor("free", "search").limits()
				.get(0).algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET));
	}

	@Test
	void algorithmSetToNullProgrammaticallyIsReported() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan plan = new RateLimitProperties.Plan();
		RateLimitProperties.Limit limit = new RateLimitProperties.Limit();
		limit.setCapacity(5);
		limit.setRefillTokens(5);
		limit.setRefillPeriod(Duration.ofSeconds(1));
		limit.setAlgorithm(null);
		plan.setDefault(List.of(limit));
		properties.getPlans().put("anonymous", plan);
		assertThat(RateLimitConfigurationValidator.validateProperties(properties))
			.extracting(ConfigurationViolation::toString)
			.anySatisfy((v) -> assertThat(v).contains("ratelimit.plans.anonymous.default[0].algorithm"));
	}

	private static String messages(Throwable failure) {
		StringBuilder text = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			text.append(t.getMessage()).append('\n');
		}
		return text.toString();
	}

	private static String failure(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		Throwable cause = context.getStartupFailure();
		while (cause != null && !(cause instanceof RateLimitConfigurationException)) {
			cause = cause.getCause();
		}
		assertThat(cause).as("a RateLimitConfigurationException in %s", context.getStartupFailure()).isNotNull();
		return cause.getMessage();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(GatewayProperties.class)
	static class GatewayRoutes {

	}

}
