package io.github.ratelimit.gateway.properties;

import java.util.List;

import io.github.ratelimit.gateway.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.gateway.properties.LimitResolver;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad configuration stops start-up with a message that names the property and the fix.
 */
class RateLimitConfigurationValidationTest {

	private static final String[] VALID = { "ratelimit.plans.anonymous.default[0].capacity=60",
			"ratelimit.plans.anonymous.default[0].refill-tokens=60",
			"ratelimit.plans.anonymous.default[0].refill-period=1m", "ratelimit.plans.free.default[0].capacity=20",
			"ratelimit.plans.free.default[0].refill-tokens=10", "ratelimit.plans.free.default[0].refill-period=1s",
			"ratelimit.plans.free.groups.search[0].capacity=5", "ratelimit.plans.free.groups.search[0].refill-tokens=1",
			"ratelimit.plans.free.groups.search[0].refill-period=1s", "ratelimit.api-keys.demo-free-key=free",
			"spring.cloud.gateway.server.webflux.routes[0].id=search",
			"spring.cloud.gateway.server.webflux.routes[0].uri=no://op",
			"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/search/**",
			"spring.cloud.gateway.server.webflux.routes[0].filters[0]=RateLimit=search" };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withUserConfiguration(GatewayRoutes.class)
		.withPropertyValues(VALID);

	@Test
	void validConfigurationStarts() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(LimitResolver.class);
			assertThat(context.getBean(LimitResolver.class).limitsFor("free", "search").limits()).hasSize(1);
		});
	}

	@Test
	void zeroCapacityAndZeroRefillAreRefusedNamingEachProperty() {
		// Case 2: capacity 0, refill-tokens 0 -> refused, never "allow all"
		this.runner
			.withPropertyValues("ratelimit.plans.free.default[0].capacity=0", "ratelimit.plans.free.default[0].refill-tokens=0")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.plans.free.default[0].capacity: must be between 1 and 2^53 tokens, was 0.")
				.contains("ratelimit.plans.free.default[0].refill-tokens: must be between 1 and 2^53 tokens, was 0."));
	}

	@Test
	void costAboveCapacityIsRefusedNamingTheRouteFilter() {
		// Case 2: cost above capacity
		this.runner
			.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[1].name=RateLimit",
					"spring.cloud.gateway.server.webflux.routes[0].filters[1].args.group=search",
					"spring.cloud.gateway.server.webflux.routes[0].filters[1].args.cost=6")
			.run((context) -> assertThat(failure(context))
				.contains("spring.cloud.gateway.server.webflux.routes[0].filters[1].args.cost: is 6 tokens, more than the capacity 5"));
	}

	@Test
	void costAboveCapacityIsRefusedWhenTheRouteIdIsTheGroup() {
		// route id 'search' is the group when the filter names none: its capacity 5 applies
		this.runner
			.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[1].name=RateLimit",
					"spring.cloud.gateway.server.webflux.routes[0].filters[1].args.cost=6")
			.run((context) -> assertThat(failure(context))
				.contains("routes[0].filters[1].args.cost: is 6 tokens, more than the capacity 5 of a limit of plan 'free'"));
	}

	@Test
	void replacingTheLimitResolverDoesNotSkipTheChecks() {
		this.runner.withBean(LimitResolver.class, () -> new LimitResolver(new RateLimitProperties()))
			.withPropertyValues("ratelimit.plans.free.default[0].capacity=0")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.plans.free.default[0].capacity"));
	}

	@Test
	void zeroOrNegativePeriodIsRefused() {
		this.runner.withPropertyValues("ratelimit.plans.free.default[0].refill-period=0s",
				"ratelimit.plans.free.groups.search[0].refill-period=-1s")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.plans.free.default[0].refill-period: must be between 1ms and 3650d, was PT0S.")
				.contains("ratelimit.plans.free.groups.search[0].refill-period: must be between 1ms and 3650d"));
	}

	@Test
	void missingPeriodIsRefused() {
		this.runner.withPropertyValues("ratelimit.plans.pro.default[0].capacity=5", "ratelimit.plans.pro.default[0].refill-tokens=5")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.plans.pro.default[0].refill-period: is missing."));
	}

	@Test
	void unknownGroupNamedByRouteIsRefused() {
		this.runner.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[0]=RateLimit=serch")
			.run((context) -> assertThat(failure(context))
				.contains("spring.cloud.gateway.server.webflux.routes[0].filters[0].args.group: names endpoint group 'serch'")
				.contains("known: [search]"));
	}

	@Test
	void badKeyByIsRefused() {
		this.runner
			.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[1].name=RateLimit",
					"spring.cloud.gateway.server.webflux.routes[0].filters[1].args.key-by=cookie")
			.run((context) -> assertThat(failure(context)).contains("args.key-by: must be api-key or ip, was 'cookie'."));
	}

	@Test
	void missingAnonymousPlanIsRefused() {
		this.runner.withPropertyValues("ratelimit.anonymous-plan=guest")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.anonymous-plan: names plan 'guest', which is not defined under ratelimit.plans.")
				.contains("[anonymous, free]"));
	}

	@Test
	void planWithoutDefaultLimitsIsRefused() {
		this.runner.withPropertyValues("ratelimit.plans.pro.groups.search[0].capacity=5",
				"ratelimit.plans.pro.groups.search[0].refill-tokens=5", "ratelimit.plans.pro.groups.search[0].refill-period=1s")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.plans.pro.default: the plan has no default limits."));
	}

	@Test
	void apiKeyMappedToUnknownPlanIsRefusedWithoutEchoingTheKey() {
		this.runner.withPropertyValues("ratelimit.api-keys.s3cr3t-key-0123456789=gold")
			.run((context) -> assertThat(failure(context)).contains("maps an API key to plan 'gold', which is not defined.")
				.contains("ratelimit.api-keys[sha256:")
				.doesNotContain("s3cr3t-key-0123456789"));
	}

	@Test
	void nonPositiveTimeoutAndBadTrustedProxiesAreRefused() {
		this.runner.withPropertyValues("ratelimit.redis-timeout=0ms", "ratelimit.trusted-proxies=-1")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.redis-timeout: must be positive")
				.contains("ratelimit.trusted-proxies: must be between 0 and 32, was -1."));
	}

	@Test
	void nonPositiveDenialLogIntervalIsRefusedNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.denial-log-interval=0s")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.denial-log-interval: must be positive, was PT0S."));
		this.runner.withPropertyValues("ratelimit.denial-log-interval=-1m")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.denial-log-interval: must be positive, was PT-1M."));
		this.runner.withPropertyValues("ratelimit.denial-log-interval=2s")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failureAnalysisNamesPropertyProblemAndFix() {
		RateLimitConfigurationException exception = new RateLimitConfigurationException(
				List.of(new ConfigurationViolation("ratelimit.plans.free.default[0].capacity", "must be between 1 and 2^53 tokens, was 0.",
						"set the largest burst the client may send, at least 1.")));
		FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer()
			.analyze(new IllegalStateException("wrapped", exception));
		assertThat(analysis.getDescription()).contains("Property: ratelimit.plans.free.default[0].capacity")
			.contains("Problem:  must be between 1 and 2^53 tokens, was 0.");
		assertThat(analysis.getAction())
			.contains("ratelimit.plans.free.default[0].capacity: set the largest burst the client may send, at least 1.");
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
