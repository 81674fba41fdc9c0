package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.properties.LimitResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.messages;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad quota configuration stops start-up naming the property, never a request at runtime: group {@code search} of
 * plan {@code free} (a token bucket of 5 at index 0, route {@code search} over it) is given a quota of 3 a day at
 * index 1, which starts as it is; each case changes one value.
 */
class QuotaConfigurationStartUpTest {

	private static final String QUOTA = "ratelimit.plans.free.groups.search[1].";

	private static final String BUCKET = "ratelimit.plans.free.groups.search[0].";

	private static final String FILTER_1 = "spring.cloud.gateway.server.webflux.routes[0].filters[1].";

	private final ReactiveWebApplicationContextRunner runner = runner(PLANS_AND_ROUTE)
		.withPropertyValues(QUOTA + "type=quota", QUOTA + "limit=3", QUOTA + "period=day");

	@Test
	void aQuotaBesideATokenBucketOnARouteStarts() {
		this.runner.withPropertyValues("ratelimit.plans.free.quota-zone=+03:28").run((context) -> {
			assertThat(context).hasNotFailed();
			PlanLimits limits = context.getBean(LimitResolver.class).limitsFor("free", "search");
			assertThat(limits.limits()).extracting(LimitDefinition::policyName)
				.containsExactly("free-search", "free-search-day");
			LimitDefinition quota = limits.limits().get(1);
			assertThat(quota.capacity()).isEqualTo(3);
			assertThat(quota.quotaPeriod().zone().getId()).isEqualTo("+03:28");
		});
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "week,free-search-week", "month,free-search-month", "year,free-search-year", "30s,free-search-30s",
			"PT12H,free-search-12h" })
	void aQuotasDefaultNameEndsWithItsPeriod(String period, String name) {
		this.runner.withPropertyValues(QUOTA + "period=" + period)
			.run((context) -> assertThat(
					context.getBean(LimitResolver.class).limitsFor("free", "search").limits().get(1).policyName())
				.isEqualTo(name));
	}

	@Test
	void aRouteCostUpToTheQuotasLimitStarts() {
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.group=search", FILTER_1 + "args.cost=3")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aRouteCostAboveTheQuotasLimitStopsStartUpNamingTheCost() {
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.group=search", FILTER_1 + "args.cost=4")
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.cost: is 4 tokens, more than the capacity 3 of a limit of plan 'free'"));
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', value = { "limit|0|limit", "limit|-1|limit", "limit|9007199254740993|limit",
			"period|fortnight|period", "period|500ms|period", "period|0s|period", "period|' '|period",
			"capacity|10|capacity", "refill-tokens|10|refill-tokens", "refill-period|1s|refill-period",
			"algorithm|fixed-window|algorithm", "max-in-flight|2|max-in-flight",
			"max-request-duration|30s|max-request-duration", "lease|20%|lease", "unit|Tokens|unit" })
	void aBadQuotaValueStopsStartUpNamingIt(String setting, String value, String named) {
		this.runner.withPropertyValues(QUOTA + setting + "=" + value)
			.run((context) -> assertThat(failure(context)).as("%s=%s", setting, value).contains(QUOTA + named + ":"));
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', value = { "limit|100", "period|day" })
	void aQuotaSettingOnARateLimitStopsStartUpNamingIt(String setting, String value) {
		this.runner.withPropertyValues(BUCKET + setting + "=" + value)
			.run((context) -> assertThat(failure(context)).contains(BUCKET + setting + ": applies to quotas only"));
	}

	@Test
	void aGlobalQuotaCountsInTheGlobalZoneNotThePlans() {
		this.runner
			.withPropertyValues("ratelimit.quota.zone=Europe/Berlin", "ratelimit.plans.free.quota-zone=+03:28",
					QUOTA + "scope=global")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitDefinition quota = context.getBean(LimitResolver.class).limitsFor("free", "search").limits().get(1);
				assertThat(quota.policyName()).isEqualTo("search-global-day");
				assertThat(quota.quotaPeriod().zone().getId()).isEqualTo("Europe/Berlin");
			});
	}

	@Test
	void anUnknownFirstDayOfWeekStopsStartUpNamingIt() {
		this.runner.withPropertyValues("ratelimit.quota.first-day-of-week=funday")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains("ratelimit.quota.first-day-of-week");
			});
	}

	@Test
	void anUnknownGlobalZoneStopsStartUpNamingIt() {
		this.runner.withPropertyValues("ratelimit.quota.zone=Mars/Olympus_Mons")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.quota.zone: is 'Mars/Olympus_Mons', which names no time zone."));
	}

	@Test
	void anUnquotedOffsetInYamlIsReadAsANumberAndTheMessageSaysToQuoteIt() throws IOException {
		// YAML 1.1 (SnakeYAML, as Boot reads application.yml) takes +14:00 for the base-60 integer 840
		List<PropertySource<?>> yaml = new YamlPropertySourceLoader().load("application.yml", new ByteArrayResource(
				"ratelimit:\n  plans:\n    free:\n      quota-zone: +14:00\n".getBytes(StandardCharsets.UTF_8)));
		assertThat(yaml.get(0).getProperty("ratelimit.plans.free.quota-zone")).isEqualTo(840);
		this.runner.withInitializer((context) -> context.getEnvironment().getPropertySources().addFirst(yaml.get(0)))
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.plans.free.quota-zone: is '840', which names no time zone.")
				.contains("An unquoted offset in YAML such as +14:00 is read as a base-60 number (840): quote it, "
						+ "zone: '+14:00'."));
	}

	@Test
	void aQuotedOffsetInYamlIsThatOffset() throws IOException {
		List<PropertySource<?>> yaml = new YamlPropertySourceLoader().load("application.yml", new ByteArrayResource(
				"ratelimit:\n  plans:\n    free:\n      quota-zone: '+14:00'\n".getBytes(StandardCharsets.UTF_8)));
		this.runner.withInitializer((context) -> context.getEnvironment().getPropertySources().addFirst(yaml.get(0)))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitDefinition quota = context.getBean(LimitResolver.class).limitsFor("free", "search").limits().get(1);
				assertThat(quota.quotaPeriod().zone().getId()).isEqualTo("+14:00");
			});
	}

	@Test
	void anUnknownPlanZoneStopsStartUpNamingIt() {
		this.runner.withPropertyValues("ratelimit.plans.free.quota-zone=+25:00")
			.run((context) -> assertThat(failure(context))
				.contains("ratelimit.plans.free.quota-zone: is '+25:00', which names no time zone."));
	}

}
