package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitScope;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.ANONYMOUS_AND_FREE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.FREE_WITH_GLOBAL_SEARCH;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.limit;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.messages;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitPropertiesValidator}: bad {@code ratelimit.*} values stop start-up with a message that names the
 * property and the fix.
 */
class RateLimitPropertiesValidatorTest {

	private static final String LIMIT = "ratelimit.plans.free.groups.search[0].";

	/** For ranges, plans and the plans that API keys and anonymous clients map to. */
	private final ReactiveWebApplicationContextRunner runner = runner(PLANS_AND_ROUTE);

	/** For the {@code algorithm} of a limit ({@link #LIMIT}) and what it implies for capacity and refill tokens. */
	private final ReactiveWebApplicationContextRunner algorithms = runner(ANONYMOUS_AND_FREE);

	/** For the {@code scope} of a limit: plans must agree on a group's global limits (one shared bucket). */
	private final ReactiveWebApplicationContextRunner scopes = runner(FREE_WITH_GLOBAL_SEARCH);

	@Test
	void zeroCapacityAndZeroRefillAreRefusedNamingEachProperty() {
		// capacity 0, refill-tokens 0 -> refused, never "allow all"
		this.runner
			.withPropertyValues("ratelimit.plans.free.default[0].capacity=0", "ratelimit.plans.free.default[0].refill-tokens=0")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.plans.free.default[0].capacity: must be between 1 and 2^53 tokens, was 0.")
				.contains("ratelimit.plans.free.default[0].refill-tokens: must be between 1 and 2^53 tokens, was 0."));
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
	void missingAnonymousPlanIsRefused() {
		this.runner.withPropertyValues("ratelimit.anonymous-plan=guest")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.anonymous-plan: names plan 'guest', which is not defined under ratelimit.plans.")
				.contains("[anonymous, free]"));
	}

	@Test
	void principalAndHeaderPlansMustBeDefined() {
		this.runner.withPropertyValues("ratelimit.principal.default-plan=gold", "ratelimit.header-plan=partner")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.principal.default-plan: names plan 'gold', which is not defined under "
						+ "ratelimit.plans.")
				.contains("define ratelimit.plans.gold or set principal.default-plan to one of [anonymous, free].")
				.contains("ratelimit.header-plan: names plan 'partner', which is not defined under ratelimit.plans."));
		this.runner.withPropertyValues("ratelimit.principal.default-plan= ")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.principal.default-plan: must not be empty."));
		this.runner.withPropertyValues("ratelimit.principal.default-plan=free", "ratelimit.header-plan=free")
			.run((context) -> assertThat(context).hasNotFailed());
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
	void aConcurrencyLimitNeedsMaxInFlightInRangeAndNoRateSettings() {
		this.algorithms.withPropertyValues(LIMIT + "type=concurrency", LIMIT + "capacity=5", LIMIT + "refill-period=1s")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "max-in-flight: must be between 1 and 1,000,000 requests, was 0.")
				.contains(LIMIT + "capacity: applies to rate limits only, and this limit has type concurrency.")
				.contains(LIMIT + "refill-period: applies to rate limits only")
				.contains("put the rate in a limit of its own in the same list."));
		this.algorithms.withPropertyValues(LIMIT + "type=concurrency", LIMIT + "max-in-flight=1000001",
				LIMIT + "max-request-duration=8d")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "max-in-flight: must be between 1 and")
				.contains(LIMIT + "max-request-duration: must be between 1ms and 7d, was PT192H."));
	}

	@Test
	void aValidConcurrencyLimitStartsAndDefaultsItsDurationTo30Seconds() {
		this.algorithms.withPropertyValues(LIMIT + "type=concurrency", LIMIT + "max-in-flight=3").run((context) -> {
			assertThat(context).hasNotFailed();
			var limits = context.getBean(LimitResolver.class).limitsFor("free", "search");
			assertThat(limits.limits()).singleElement().satisfies((limit) -> {
				assertThat(limit.isConcurrency()).isTrue();
				assertThat(limit.capacity()).isEqualTo(3);
				assertThat(limit.refillPeriod()).isEqualTo(java.time.Duration.ofSeconds(30));
			});
		});
	}

	@Test
	void concurrencySettingsOnARateLimitOrConcurrencyAsAnAlgorithmAreRefused() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-period=1s", LIMIT + "max-in-flight=3")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "max-in-flight: applies to concurrency limits only, and this limit has type rate.")
				.contains("add type: concurrency"));
		this.algorithms.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-period=1s", LIMIT + "algorithm=concurrency")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "algorithm: is concurrency, which is a type, not an algorithm.")
				.contains("write type: concurrency with max-in-flight and max-request-duration instead."));
		this.algorithms.withPropertyValues(LIMIT + "type=parallel", LIMIT + "max-in-flight=3")
			.run((context) -> assertThat(messages(context.getStartupFailure())).contains(LIMIT + "type")
				.contains("parallel"));
	}

	@Test
	void unknownAlgorithmStopsStartUpNamingTheProperty() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-period=1s", LIMIT + "algorithm=leaky-bucket")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(LIMIT + "algorithm")
					.contains("leaky-bucket");
			});
	}

	@Test
	void windowRefillTokensOtherThanCapacityIsRefused() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-tokens=1", LIMIT + "refill-period=1s",
				LIMIT + "algorithm=fixed-window")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "refill-tokens: must equal capacity (5) or be "
					+ "left out with algorithm fixed-window, which admits capacity tokens per refill-period window; was 1.")
				.contains("remove refill-tokens (or set it to 5); for a burst larger than the rate, use algorithm: "
						+ "token-bucket."));
	}

	@Test
	void slidingLogAboveOneMillionIsRefused() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=1000001", LIMIT + "refill-period=1h",
				LIMIT + "algorithm=sliding-window-log")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "capacity: must be at most 1,000,000 tokens with sliding-window-log")
				.contains("use algorithm: sliding-window-counter"));
	}

	@Test
	void aTokenBucketFasterThanOnePerMicrosecondOrSlowerToFillThanAHundredYearsIsRefused() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=5000000", LIMIT + "refill-tokens=2000000",
				LIMIT + "refill-period=1s")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "refill-tokens: must be at most one token "
					+ "per microsecond of refill-period (1,000,000 per second), was 2000000 per PT1S."));
		this.algorithms.withPropertyValues(LIMIT + "capacity=40000", LIMIT + "refill-tokens=1",
				LIMIT + "refill-period=1d")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "capacity: must fill from empty within 36500 days"));
	}

	@Test
	void aUsageUnitIsANameOnARateLimitWithoutLeaseAndOnePerList() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "unit=Tokens")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "unit: must be requests or a unit name"));
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-period=1m",
				LIMIT + "algorithm=sliding-window-log", LIMIT + "unit=tokens")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "unit: is 'tokens', but sliding-window-log keeps one Redis entry per token"));
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "unit=tokens", LIMIT + "lease=2%")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "lease: cannot be used on a limit in 'tokens'"));
		this.algorithms.withPropertyValues(LIMIT + "type=concurrency", LIMIT + "max-in-flight=3", LIMIT + "unit=tokens")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "unit: is 'tokens', but a concurrency limit counts requests in flight."));
		String second = "ratelimit.plans.free.groups.search[1].";
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "unit=tokens", second + "capacity=100", second + "refill-tokens=10", second + "refill-period=1s",
				second + "unit=content-bytes")
			.run((context) -> assertThat(failure(context)).contains(second
					+ "unit: is 'content-bytes', but another limit of this list counts 'tokens'"));
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "unit=tokens")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aLeaseBudgetIsAPercentageOfATokenBucketOnly() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "lease=2")
			.run((context) -> {
				// not a lease budget at all: refused when bound, by Boot's binder naming the property
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains("'" + LIMIT + "lease'")
					.contains("must be off or a percentage above 0% and at most 50% of the capacity, was '2'. "
							+ "Fix: set e.g. lease: 2%");
			});
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "lease=60%")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "lease: must be off or a percentage"));
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-period=1m",
				LIMIT + "algorithm=fixed-window", LIMIT + "lease=2%")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "lease: applies to token buckets only, was '2%' with fixed-window."));
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "lease=2%", "ratelimit.leases.duration=0s")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.leases.duration: must be above 0 and at most 10s, was PT0S."));
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "lease=2.5 %")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RateLimitProperties.class).getPlans().get("free").getGroups().get("search")
					.get(0).getLease()).isEqualTo(new LeaseBudget(2.5)).hasToString("2.5%");
			});
		this.algorithms.withPropertyValues(LIMIT + "capacity=100", LIMIT + "refill-tokens=10", LIMIT + "refill-period=1s",
				LIMIT + "lease=off")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RateLimitProperties.class).getPlans().get("free").getGroups().get("search")
					.get(0).getLease()).isEqualTo(LeaseBudget.OFF);
			});
	}

	@Test
	void tokenBucketStillNeedsRefillTokens() {
		this.algorithms.withPropertyValues(LIMIT + "capacity=5", LIMIT + "refill-period=1s")
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "refill-tokens: must be between 1 and 2^53"));
	}

	@Test
	void algorithmSetToNullProgrammaticallyIsReported() {
		RateLimitProperties.Limit limit = limit(5, 5, Duration.ofSeconds(1));
		limit.setAlgorithm(null);
		assertThat(violationsOfTheOnlyLimit(limit)).extracting(ConfigurationViolation::toString)
			.anySatisfy((v) -> assertThat(v).contains("ratelimit.plans.anonymous.default[0].algorithm"));
	}

	@Test
	void plansGivingAGroupDifferentGlobalLimitsStopStartUp() {
		this.scopes.withPropertyValues("ratelimit.plans.pro.default[0].capacity=200",
				"ratelimit.plans.pro.default[0].refill-tokens=100", "ratelimit.plans.pro.default[0].refill-period=1s",
				"ratelimit.plans.pro.groups.search[0].capacity=2000",
				"ratelimit.plans.pro.groups.search[0].refill-tokens=500",
				"ratelimit.plans.pro.groups.search[0].refill-period=1s",
				"ratelimit.plans.pro.groups.search[0].scope=GLOBAL")
			.run((context) -> assertThat(failure(context)).contains("ratelimit.plans.pro.groups.search")
				.contains("plan 'free'")
				.contains("one bucket shared by every client of the group"));
	}

	@Test
	void unknownScopeStopsStartUpNamingTheProperty() {
		this.scopes.withPropertyValues("ratelimit.plans.free.groups.search[1].scope=everyone").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("ratelimit.plans.free.groups.search[1].scope")
				.contains("everyone");
		});
	}

	@Test
	void plansWithoutTheGroupsGlobalLimitAreNamedInAStartUpWarning() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Limit global = limit(100, LimitScope.GLOBAL);
		RateLimitProperties.Limit own = limit(5, LimitScope.CLIENT);
		for (String name : List.of("free", "pro")) {
			RateLimitProperties.Plan plan = new RateLimitProperties.Plan();
			plan.setDefault(List.of(own));
			plan.getGroups().put("search", List.of(own, global));
			properties.getPlans().put(name, plan);
		}
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(own));
		properties.getPlans().put("anonymous", anonymous);
		assertThat(RateLimitPropertiesValidator.validate(properties)).isEmpty();
		assertThat(RateLimitPropertiesValidator.globalLimitGaps(properties)).singleElement()
			.satisfies((message) -> assertThat(message).contains("Endpoint group 'search'")
				.contains("ratelimit.plans.anonymous.default")
				.contains("ratelimit.plans.free.groups.search"));
		anonymous.getGroups().put("search", List.of(own, global));
		assertThat(RateLimitPropertiesValidator.globalLimitGaps(properties)).isEmpty();
	}

	@Test
	void scopeSetToNullProgrammaticallyIsReported() {
		RateLimitProperties.Limit limit = limit(5, 5, Duration.ofSeconds(1));
		limit.setScope(null);
		assertThat(violationsOfTheOnlyLimit(limit)).extracting(ConfigurationViolation::toString)
			.anySatisfy((v) -> assertThat(v).contains("ratelimit.plans.anonymous.default[0].scope"));
	}

	/** The violations of properties whose only plan, {@code anonymous}, has this one default limit. */
	private static List<ConfigurationViolation> violationsOfTheOnlyLimit(RateLimitProperties.Limit limit) {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan plan = new RateLimitProperties.Plan();
		plan.setDefault(List.of(limit));
		properties.getPlans().put("anonymous", plan);
		return RateLimitPropertiesValidator.validate(properties);
	}

}
