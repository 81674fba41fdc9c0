package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.ANONYMOUS_AND_FREE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.limit;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.messages;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link ProtectionRules}: the rules of {@code ratelimit.protections} and {@code ratelimit.priorities}, each problem
 * naming its property (pure logic over bound properties), the protections a valid configuration builds, and the
 * start-up of a context with bad configuration, which fails naming the property (values that do not bind fail in
 * Spring Boot's binding, naming it too).
 */
class ProtectionRulesTest {

	private static final String ORDERS = "ratelimit.protections.orders";

	@Test
	void validProtectionsAndSharesHaveNoProblem() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", adaptive(4, 500, 20));
		p.getProtections().put("search", fixed(64));
		p.getPriorities().put("high", "50%");
		p.getPriorities().put("normal", " 30 % ");
		p.getPriorities().put("LOW", "12.5%");
		assertThat(RateLimitPropertiesValidator.validate(p)).isEmpty();
	}

	@Test
	void aFixedLimitNeedsMaxInFlightOfAtLeastOne() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", fixed(null));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".max-in-flight");
			assertThat(v.problem()).isEqualTo("is required with limit: fixed.");
			assertThat(v.fix()).contains("max-in-flight: 64", "limit: adaptive");
		});
		p.getProtections().put("orders", fixed(0));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".max-in-flight");
			assertThat(v.problem()).isEqualTo("must be at least 1, was 0.");
		});
	}

	@Test
	void aFixedLimitTakesNoneOfTheAdaptiveSettings() {
		RateLimitProperties p = properties();
		RateLimitProperties.Protection orders = fixed(64);
		orders.setAlgorithm(AdaptiveAlgorithm.GRADIENT);
		orders.setMin(4);
		orders.setMax(500);
		orders.setInitial(20);
		p.getProtections().put("orders", orders);
		assertThat(violations(p)).extracting(ConfigurationViolation::property).containsExactly(ORDERS + ".algorithm",
				ORDERS + ".min", ORDERS + ".max", ORDERS + ".initial");
		assertThat(violations(p)).allSatisfy((v) -> assertThat(v.problem()).isEqualTo("applies only to limit: adaptive."));
	}

	@Test
	void maxInFlightDoesNotApplyToAnAdaptiveLimit() {
		RateLimitProperties p = properties();
		RateLimitProperties.Protection orders = adaptive(null, null, null);
		orders.setMaxInFlight(64);
		p.getProtections().put("orders", orders);
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".max-in-flight");
			assertThat(v.problem()).isEqualTo("applies only to limit: fixed.");
			assertThat(v.fix()).contains("limit: fixed");
		});
	}

	@Test
	void minIsAtLeastOneAndMaxAtLeastMin() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", adaptive(0, null, null));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".min");
			assertThat(v.problem()).isEqualTo("must be at least 1, was 0.");
		});
		p.getProtections().put("orders", adaptive(50, 10, null));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".max");
			assertThat(v.problem()).isEqualTo("must be at least min (50), was 10.");
		});
		// against the default min (4)
		p.getProtections().put("orders", adaptive(null, 3, null));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".max");
			assertThat(v.problem()).isEqualTo("must be at least min (4), was 3.");
		});
		// a min above the default max raises the max it defaults to
		p.getProtections().put("orders", adaptive(2000, null, null));
		assertThat(violations(p)).isEmpty();
	}

	@Test
	void initialIsWithinMinAndMax() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", adaptive(4, 100, 101));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".initial");
			assertThat(v.problem()).isEqualTo("must be from min (4) to max (100), was 101.");
		});
		p.getProtections().put("orders", adaptive(10, null, 5));
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".initial");
			assertThat(v.problem()).isEqualTo("must be from min (10) to max (1000), was 5.");
		});
		p.getProtections().put("orders", adaptive(4, 100, 100));
		assertThat(violations(p)).isEmpty();
	}

	@Test
	void retryAfterIsAtLeastOneSecond() {
		RateLimitProperties p = properties();
		RateLimitProperties.Protection orders = fixed(8);
		orders.setRetryAfter(Duration.ofMillis(500));
		p.getProtections().put("orders", orders);
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(ORDERS + ".retry-after");
			assertThat(v.problem()).isEqualTo("must be at least 1s, was PT0.5S.");
		});
	}

	@Test
	void sharesAddUpToAtMostOneHundredPercent() {
		RateLimitProperties p = properties();
		p.getPriorities().put("high", "60%");
		p.getPriorities().put("normal", "30%");
		p.getPriorities().put("low", "20.5%");
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo("ratelimit.priorities");
			assertThat(v.problem()).isEqualTo("the shares add up to 110.5%, more than 100%.");
		});
		p.getPriorities().put("low", "10%");
		assertThat(violations(p)).isEmpty();
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "40", "0.4", "40 percent", "abc%", "-10%", "101%", "1000%", "%", "" })
	void aShareIsAPercentageFromZeroToOneHundred(String share) {
		RateLimitProperties p = properties();
		p.getPriorities().put("high", share);
		assertThat(violations(p)).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo("ratelimit.priorities.high");
			assertThat(v.problem()).isEqualTo("must be a percentage from 0% to 100%, was '" + share + "'.");
			assertThat(v.fix()).isEqualTo("write a number from 0 to 100 followed by %, e.g. 40%.");
		});
	}

	@Test
	void sharesAreGivenOnlyToHighNormalAndLow() {
		RateLimitProperties p = properties();
		p.getPriorities().put("urgent", "10%");
		p.getPriorities().put("critical", "20%");
		assertThat(violations(p)).extracting(ConfigurationViolation::property, ConfigurationViolation::problem)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("ratelimit.priorities.urgent", "is not a priority."),
					org.assertj.core.groups.Tuple.tuple("ratelimit.priorities.critical",
							"takes no share: a critical request is refused only when critical requests alone fill "
									+ "the limit."));
	}

	@Test
	void aBlankProtectionNameIsReported() {
		RateLimitProperties p = properties();
		p.getProtections().put(" ", fixed(8));
		assertThat(violations(p)).extracting(ConfigurationViolation::property).containsExactly("ratelimit.protections");
	}

	@Test
	void everyProblemIsReportedAtOnce() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", fixed(null));
		p.getProtections().put("search", adaptive(0, null, null));
		p.getPriorities().put("high", "lots");
		assertThat(violations(p)).extracting(ConfigurationViolation::property).containsExactlyInAnyOrder(
				"ratelimit.priorities.high", ORDERS + ".max-in-flight", "ratelimit.protections.search.min");
	}

	@Test
	void aValidConfigurationBuildsItsProtectionsWithTheDefaults() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", adaptive(null, null, null));
		RateLimitProperties.Protection search = fixed(64);
		search.setRetryAfter(Duration.ofMillis(1500));
		search.setShadow(true);
		p.getProtections().put("search", search);
		p.getPriorities().put("high", "70%");
		p.getPlans().get("free").setPriority(Priority.HIGH);

		UpstreamProtections protections = ProtectionRules.protections(p, () -> p);

		assertThat(protections.all()).extracting(UpstreamProtection::name).containsExactly("orders", "search");
		UpstreamProtection orders = protections.get("orders");
		assertThat(orders.isFixed()).isFalse();
		assertThat(orders.algorithm()).isEqualTo(AdaptiveAlgorithm.VEGAS);
		assertThat(orders.minLimit()).isEqualTo(ProtectionRules.DEFAULT_MIN);
		assertThat(orders.maxLimit()).isEqualTo(ProtectionRules.DEFAULT_MAX);
		assertThat(orders.limit()).isEqualTo(ProtectionRules.DEFAULT_INITIAL);
		assertThat(orders.retryAfterSeconds()).isEqualTo(1);
		assertThat(orders.isShadow()).isFalse();
		UpstreamProtection fixed = protections.get("search");
		assertThat(fixed.isFixed()).isTrue();
		assertThat(fixed.algorithm()).isNull();
		assertThat(fixed.limit()).isEqualTo(64);
		assertThat(fixed.retryAfterSeconds()).as("rounded up to whole seconds").isEqualTo(2);
		assertThat(fixed.isShadow()).isTrue();
		assertThat(fixed.shares().share(Priority.HIGH)).isEqualTo(0.7);
		assertThat(fixed.shares().share(Priority.NORMAL)).as("a priority not given has no share").isZero();
		assertThat(protections.priorityOf("free")).isEqualTo(Priority.HIGH);
		assertThat(protections.priorityOf("anonymous")).isEqualTo(Priority.NORMAL);
		assertThat(protections.priorityOf("no-such-plan")).isEqualTo(Priority.NORMAL);
	}

	@Test
	void theInitialLimitDefaultsWithinMinAndMax() {
		RateLimitProperties p = properties();
		p.getProtections().put("small", adaptive(2, 10, null));
		p.getProtections().put("large", adaptive(50, 100, null));
		UpstreamProtections protections = ProtectionRules.protections(p, () -> p);
		assertThat(protections.get("small").limit()).isEqualTo(10);
		assertThat(protections.get("large").limit()).isEqualTo(50);
	}

	@Test
	void noProtectionIsBuiltFromAnInvalidConfiguration() {
		RateLimitProperties p = properties();
		p.getProtections().put("orders", fixed(null));
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> ProtectionRules.protections(p, () -> p))
			.satisfies((ex) -> assertThat(ex.getViolations()).extracting(ConfigurationViolation::property)
				.containsExactly(ORDERS + ".max-in-flight"));
	}

	@Test
	void badProtectionsOrSharesStopStartUpNamingTheProperty() {
		runner(ANONYMOUS_AND_FREE).withPropertyValues("ratelimit.protections.orders.limit=fixed",
				"ratelimit.priorities.high=120%")
			.run((context) -> assertThat(failure(context)).contains(ORDERS + ".max-in-flight",
					"ratelimit.priorities.high"));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "ratelimit.protections.orders.algorithm=aimd",
			"ratelimit.protections.orders.limit=elastic", "ratelimit.plans.free.priority=urgent",
			"ratelimit.protections.orders.max=many" })
	void aValueThatDoesNotBindStopsStartUpNamingTheProperty(String property) {
		String name = property.substring(0, property.indexOf('='));
		runner(ANONYMOUS_AND_FREE).withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure()))
				.contains("Failed to bind properties under '" + name + "'");
		});
	}

	@Test
	void aPlanPriorityIsReadInAnyCase() {
		runner(ANONYMOUS_AND_FREE).withPropertyValues("ratelimit.plans.free.priority=Critical")
			.run((context) -> assertThat(context.getBean(UpstreamProtections.class).priorityOf("free"))
				.isEqualTo(Priority.CRITICAL));
	}

	@Test
	void aRouteNamingAnUnknownProtectionOrAPriorityWithoutProtectionStopsStartUp() {
		String routes = "spring.cloud.gateway.server.webflux.routes";
		runner(ANONYMOUS_AND_FREE).withPropertyValues("ratelimit.protections.orders.max=100",
				routes + "[0].id=orders", routes + "[0].uri=no://op", routes + "[0].predicates[0]=Path=/orders/**",
				routes + "[0].filters[0].name=RateLimit", routes + "[0].filters[0].args.protect=order",
				routes + "[1].id=login", routes + "[1].uri=no://op", routes + "[1].predicates[0]=Path=/auth/login",
				routes + "[1].filters[0].name=RateLimit", routes + "[1].filters[0].args.priority=critical")
			.run((context) -> assertThat(failure(context)).contains("routes[0]", ".args.protect",
					"names protection 'order', which ratelimit.protections does not define", "routes[1]",
					".args.priority", "is given without protect"));
	}

	/** The anonymous plan and plan {@code free}, valid. */
	private static RateLimitProperties properties() {
		RateLimitProperties p = new RateLimitProperties();
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(limit(60, 60, Duration.ofMinutes(1))));
		RateLimitProperties.Plan free = new RateLimitProperties.Plan();
		free.setDefault(List.of(limit(20, 10, Duration.ofSeconds(1))));
		p.getPlans().put("anonymous", anonymous);
		p.getPlans().put("free", free);
		return p;
	}

	private static List<ConfigurationViolation> violations(RateLimitProperties p) {
		return RateLimitPropertiesValidator.validate(p);
	}

	private static RateLimitProperties.Protection fixed(Integer maxInFlight) {
		RateLimitProperties.Protection protection = new RateLimitProperties.Protection();
		protection.setLimit(RateLimitProperties.ProtectionLimit.FIXED);
		protection.setMaxInFlight(maxInFlight);
		return protection;
	}

	private static RateLimitProperties.Protection adaptive(Integer min, Integer max, Integer initial) {
		RateLimitProperties.Protection protection = new RateLimitProperties.Protection();
		protection.setMin(min);
		protection.setMax(max);
		protection.setInitial(initial);
		return protection;
	}

}
