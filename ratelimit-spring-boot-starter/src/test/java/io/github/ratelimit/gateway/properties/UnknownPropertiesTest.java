package io.github.ratelimit.gateway.properties;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.properties.UnknownProperties.Found;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The names under {@code ratelimit.*} that no property binds, and keys of another type of limit, found from property
 * sources as Spring Boot binds them (pure logic: no application context).
 */
class UnknownPropertiesTest {

	private static final String LIMIT = "ratelimit.plans.free.groups.search[0].";

	/** A valid plan: a token bucket in the default list and in group search. */
	private static final Map<String, Object> PLAN = Map.of("ratelimit.plans.free.default[0].capacity", "5",
			"ratelimit.plans.free.default[0].refill-tokens", "5", "ratelimit.plans.free.default[0].refill-period", "1s",
			LIMIT + "capacity", "5", LIMIT + "refill-tokens", "1", LIMIT + "refill-period", "1s");

	@Test
	void validNamesAreNotReported() {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put("ratelimit.redis-timeout", "50ms");
		names.put("ratelimit.redisTimeout", "50ms");
		names.put("ratelimit.redis_timeout", "50ms");
		names.put("ratelimit.circuit-breaker.slidingWindowSize", "20");
		names.put("ratelimit.circuit-breaker.failure-rate-threshold", "50");
		names.put("ratelimit.groups.login.critical", "true");
		names.put("ratelimit.api-keys.demo-free-key", "free");
		names.put("ratelimit.api-keys.[key.with.dots]", "free");
		names.put("ratelimit.plan-store.cache.ttl", "1m");
		names.put("ratelimit.client-ip.ipv6-prefix-length", "56");
		names.put("ratelimit.plans.free.quota-zone", "UTC");
		names.put("ratelimit.redis.configure-application-client", "false");
		names.put("ratelimit.protections.orders.max-in-flight", "64");
		names.put("ratelimit.protections.orders.retry-after", "2s");
		names.put("ratelimit.protections.search.algorithm", "gradient");
		names.put("ratelimit.priorities.high", "50%");
		names.put("ratelimit.plans.free.priority", "high");
		assertThat(find(names).violations()).isEmpty();
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', value = {
			LIMIT + "algoritm|sliding-window-log|" + LIMIT + "algorithm",
			LIMIT + "leese|50%|" + LIMIT + "lease",
			"ratelimit.plans.free.default[0].refil-period|1s|ratelimit.plans.free.default[0].refill-period",
			"ratelimit.redis-timout|50ms|ratelimit.redis-timeout",
			"ratelimit.groups.login.critcal|true|ratelimit.groups.login.critical",
			"ratelimit.circuit-braker.failure-rate-threshold|50|ratelimit.circuit-breaker.failure-rate-threshold",
			"ratelimit.circuitbreaker.minimum-number-of-cals|5|ratelimit.circuitbreaker.minimum-number-of-calls",
			"ratelimit.plan-store.cache.tll|1m|ratelimit.plan-store.cache.ttl",
			"ratelimit.plan-stor.type|redis|ratelimit.plan-store.type",
			"ratelimit.client-ip.ipv6-prefix-lenght|56|ratelimit.client-ip.ipv6-prefix-length",
			"ratelimit.plans.free.quota-zon|UTC|ratelimit.plans.free.quota-zone",
			"ratelimit.plan.free.default[0].capacity|5|ratelimit.plans.free.default[0].capacity",
			"ratelimit.fallback.mod|allow|ratelimit.fallback.mode",
			"ratelimit.protections.orders.max-in-fligth|64|ratelimit.protections.orders.max-in-flight",
			"ratelimit.protections.orders.algoritm|vegas|ratelimit.protections.orders.algorithm",
			"ratelimit.protection.orders.max|100|ratelimit.protections.orders.max",
			"ratelimit.priorites.high|50%|ratelimit.priorities.high",
			"ratelimit.plans.free.priorty|high|ratelimit.plans.free.priority" })
	void aMisspeltNameIsReportedAsWrittenWithTheNameMeant(String written, String value, String meant) {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put(written, value);
		List<ConfigurationViolation> violations = find(names).violations();
		assertThat(violations).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(written);
			assertThat(v.problem()).startsWith("is not a property");
			assertThat(v.fix()).startsWith("write " + meant + ": did you mean '");
		});
	}

	@Test
	void aNameNearNoPropertyListsTheValidOnes() {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put(LIMIT + "burst", "10");
		assertThat(find(names).violations()).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(LIMIT + "burst");
			assertThat(v.problem()).isEqualTo("is not a property: ratelimit.plans.free.groups.search[0] has no 'burst'.");
			assertThat(v.fix()).contains("capacity", "refill-tokens", "max-in-flight", "period");
		});
	}

	@Test
	void aListWrittenWithoutAnIndexSaysSo() {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put("ratelimit.plans.pro.default.capacity", "10");
		assertThat(find(names).violations()).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo("ratelimit.plans.pro.default.capacity");
			assertThat(v.problem()).contains("ratelimit.plans.pro.default is a list");
			assertThat(v.fix()).contains("ratelimit.plans.pro.default[0]");
		});
	}

	@Test
	void everyTypoOfOneConfigurationIsReportedAtOnce() {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put(LIMIT + "algoritm", "fixed-window");
		names.put("ratelimit.plans.free.groups.search[1].leese", "2%");
		names.put("ratelimit.plans.free.groups.search[1].capacity", "2");
		names.put("ratelimit.redis-timout", "50ms");
		names.put("ratelimit.groups.login.critcal", "true");
		assertThat(find(names).violations()).extracting(ConfigurationViolation::property)
			.containsExactlyInAnyOrder(LIMIT + "algoritm", "ratelimit.plans.free.groups.search[1].leese",
					"ratelimit.redis-timout", "ratelimit.groups.login.critcal");
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', value = { "RATELIMIT_REDISTIMOUT|RATELIMIT_REDISTIMEOUT (ratelimit.redis-timeout)",
			"RATELIMIT_PLANS_FREE_GROUPS_SEARCH_0_ALGORITM|RATELIMIT_PLANS_FREE_GROUPS_SEARCH_0_ALGORITHM "
					+ "(ratelimit.plans.free.groups.search[0].algorithm)",
			"RATELIMIT_CIRCUIT_BRAKER_FAILURERATETHRESHOLD|RATELIMIT_CIRCUITBREAKER_FAILURERATETHRESHOLD "
					+ "(ratelimit.circuit-breaker.failure-rate-threshold)",
			"RATELIMIT_GROUPS_LOGIN_CRITCAL|RATELIMIT_GROUPS_LOGIN_CRITICAL (ratelimit.groups.login.critical)" })
	void aMisspeltEnvironmentVariableIsReportedByItsNameWithTheVariableMeant(String variable, String meant) {
		Found found = findWithEnvironment(Map.of(variable, "1"));
		assertThat(found.violations()).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(variable);
			assertThat(v.fix()).startsWith("write " + meant);
		});
	}

	@Test
	void anEnvironmentVariableForAListWithoutItsIndexIsReported() {
		Found found = findWithEnvironment(Map.of("RATELIMIT_PLANS_FREE_DEFAULT_CAPACITY", "9"));
		assertThat(found.violations()).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo("RATELIMIT_PLANS_FREE_DEFAULT_CAPACITY");
			assertThat(v.fix()).contains("RATELIMIT_PLANS_FREE_DEFAULT_0");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "RATELIMIT_REDISTIMEOUT", "RATELIMIT_REDIS_TIMEOUT",
			"RATELIMIT_PLANS_FREE_DEFAULT_0_REFILLTOKENS", "RATELIMIT_PLANS_FREE_DEFAULT_0_REFILL_TOKENS",
			"RATELIMIT_CIRCUITBREAKER_FAILURERATETHRESHOLD", "RATELIMIT_CIRCUIT_BREAKER_FAILURE_RATE_THRESHOLD",
			"RATELIMIT_PLANSTORE_CACHE_TTL", "RATELIMIT_APIKEYS_DEMOKEY" })
	void anEnvironmentVariableSpringBootBindsIsNotReported(String variable) {
		assertThat(findWithEnvironment(Map.of(variable, "9")).violations()).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "RATELIMIT_TEST_REDIS_URL", "RATELIMIT_GATEWAY_SERVICE_HOST",
			"RATELIMIT_GATEWAY_SERVICE_PORT_HTTP", "RATELIMIT_GATEWAY_PORT", "RATELIMIT_GATEWAY_PORT_8080_TCP_ADDR",
			"RATELIMIT_REDIS_PORT", "RATELIMIT_REDIS_SERVICE_HOST", "RATELIMIT_PORT", "RATELIMIT_SERVICE_HOST" })
	void anEnvironmentVariableNearNoPropertyIsLeftAlone(String variable) {
		Found found = findWithEnvironment(Map.of(variable, "tcp://10.0.0.1:8080"));
		assertThat(found.violations()).isEmpty();
		assertThat(found.ignoredVariables()).containsExactly(variable);
	}

	@Test
	void anElementOfAListThatAnotherSourceReplacedIsNotReported() {
		// a higher source gives the list one element: the second one of the lower source is not bound, and valid
		MutablePropertySources sources = new MutablePropertySources();
		sources.addLast(new MapPropertySource("high", Map.of("ratelimit.plans.free.default[0].capacity", "7",
				"ratelimit.plans.free.default[0].refill-tokens", "7", "ratelimit.plans.free.default[0].refill-period",
				"1s")));
		sources.addLast(new MapPropertySource("low", Map.of("ratelimit.plans.free.default[0].capacity", "5",
				"ratelimit.plans.free.default[1].capacity", "5", "ratelimit.plans.free.default[1].refill-tokens", "5",
				"ratelimit.plans.free.default[1].refill-period", "1d")));
		assertThat(find(sources).violations()).isEmpty();
	}

	@ParameterizedTest(name = "type {0}: {1}")
	@CsvSource(delimiter = '|', value = {
			"quota|capacity|0|does not apply to a quota", "quota|algorithm|token-bucket|does not apply to a quota",
			"quota|max-in-flight|0|does not apply to a quota", "quota|refill-tokens|0|does not apply to a quota",
			"concurrency|algorithm|token-bucket|applies to rate limits only",
			"concurrency|capacity|0|applies to rate limits only", "concurrency|limit|0|applies to quotas only",
			"concurrency|period|' '|applies to quotas only", "rate|limit|0|applies to quotas only",
			"rate|max-in-flight|0|applies to concurrency limits only",
			"rate|max-request-duration|30s|applies to concurrency limits only" })
	void aKeyOfAnotherTypeOfLimitIsReportedEvenWithTheDefaultValue(String type, String key, String value,
			String problem) {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put("ratelimit.plans.free.default[1].type", type);
		names.put("ratelimit.plans.free.default[1]." + key, value);
		assertThat(find(names).violations()).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo("ratelimit.plans.free.default[1]." + key);
			assertThat(v.problem()).startsWith(problem);
		});
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', value = { "algorithm|fixed-window|applies to token buckets only",
			"algorithm|sliding-window-counter|applies to token buckets only",
			"unit|tokens|cannot be used on a limit in 'tokens'" })
	void aLeaseOnAWindowOrAUsageLimitIsReportedEvenWhenOff(String key, String value, String problem) {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.put(LIMIT + key, value);
		names.put(LIMIT + "lease", "off");
		assertThat(find(names).violations()).singleElement().satisfies((v) -> {
			assertThat(v.property()).isEqualTo(LIMIT + "lease");
			assertThat(v.problem()).startsWith(problem);
		});
	}

	@Test
	void theKeysOfEachTypeAreAccepted() {
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		names.putAll(Map.of(LIMIT + "lease", "2%", LIMIT + "algorithm", "token-bucket", LIMIT + "name", "s",
				LIMIT + "scope", "client", LIMIT + "unit", "requests", LIMIT + "type", "rate"));
		String concurrency = "ratelimit.plans.free.groups.search[1].";
		names.putAll(Map.of(concurrency + "type", "concurrency", concurrency + "max-in-flight", "2",
				concurrency + "max-request-duration", "10s", concurrency + "scope", "global"));
		String quota = "ratelimit.plans.free.groups.search[2].";
		names.putAll(Map.of(quota + "type", "quota", quota + "limit", "100", quota + "period", "day",
				quota + "unit", "tokens"));
		assertThat(find(names).violations()).isEmpty();
	}

	@Test
	void everyNameOfTheConfigurationMetadataIsKnown() throws IOException {
		// the generated metadata of every ratelimit.* property, as a user's IDE offers them
		Map<String, Object> names = new LinkedHashMap<>(PLAN);
		try (InputStream metadata = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).isNotNull();
			JsonNode root = new ObjectMapper().readTree(metadata);
			List<String> properties = new ArrayList<>();
			root.get("properties").forEach((p) -> properties.add(p.get("name").asString()));
			assertThat(properties).contains("ratelimit.redis-timeout", "ratelimit.plan-store.type",
					"ratelimit.client-ip.ipv6-prefix-length");
			for (String property : properties) {
				if (property.startsWith("ratelimit.") && !property.startsWith("ratelimit.plans")
						&& !property.startsWith("ratelimit.groups") && !property.startsWith("ratelimit.api-keys")) {
					names.put(property, sample(property));
				}
			}
		}
		assertThat(find(names).violations()).isEmpty();
	}

	@Test
	void theDistanceCountsASwapOfNeighboursAsOneEdit() {
		assertThat(UnknownProperties.distance("algoritm", "algorithm")).isEqualTo(1);
		assertThat(UnknownProperties.distance("algoirthm", "algorithm")).isEqualTo(1);
		assertThat(UnknownProperties.distance("lease", "lease")).isZero();
		assertThat(UnknownProperties.distance("", "abc")).isEqualTo(3);
	}

	/** A value the property's type converts, so that only its name is checked. */
	private static String sample(String property) {
		return switch (property) {
			case "ratelimit.enabled", "ratelimit.shadow-mode", "ratelimit.shadow-headers",
					"ratelimit.fallback.learn-instances", "ratelimit.over-limit-cache.enabled",
					"ratelimit.redis.configure-application-client" -> "true";
			default -> "1";
		};
	}

	private static Found find(Map<String, Object> names) {
		MutablePropertySources sources = new MutablePropertySources();
		sources.addLast(new MapPropertySource("test", names));
		return find(sources);
	}

	private static Found findWithEnvironment(Map<String, Object> variables) {
		MutablePropertySources sources = new MutablePropertySources();
		sources.addLast(new MapPropertySource("test", PLAN));
		sources.addLast(new SystemEnvironmentPropertySource("systemEnvironment", variables));
		return find(sources);
	}

	private static Found find(MutablePropertySources sources) {
		Iterable<ConfigurationPropertySource> configurationSources = ConfigurationPropertySources.from(sources);
		return UnknownProperties.find(configurationSources, new Binder(configurationSources));
	}

}
