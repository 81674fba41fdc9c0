package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ByteArrayResource;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A misspelt property under {@code ratelimit.*}, or a key of another type of limit, stops start-up naming the
 * property as written and the valid name meant, wherever it is written: a list element of a plan, the top level, an
 * endpoint group, the plan store; in YAML, a command-line argument or an environment variable. Plan {@code free}
 * gives group {@code search} a token bucket of 5 (route {@code search} over it), which starts as it is. (A list
 * element that a property source gives only unknown keys already failed to bind: Spring Boot reports its elements
 * "left unbound".)
 */
@ExtendWith(OutputCaptureExtension.class)
class MisspeltPropertyStartUpTest {

	private static final String LIMIT = "ratelimit.plans.free.groups.search[0].";

	private final ReactiveWebApplicationContextRunner runner = runner(PLANS_AND_ROUTE);

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', value = { LIMIT + "algoritm|sliding-window-log|algorithm",
			LIMIT + "leese|50%|lease", "ratelimit.plans.free.default[0].refil-period|1s|refill-period",
			LIMIT + "max-in-flght|2|max-in-flight",
			"ratelimit.redis-timout|50ms|redis-timeout", "ratelimit.groups.search.critcal|true|critical",
			"ratelimit.groups.search.shadw|true|shadow", "ratelimit.fallback.mod|allow|mode",
			"ratelimit.plan-store.typ|redis|type", "ratelimit.plans.free.quota-zon|UTC|quota-zone" })
	void aMisspeltPropertyStopsStartUpNamingItAndTheNameMeant(String property, String value, String meant) {
		this.runner.withPropertyValues(property + "=" + value)
			.run((context) -> assertThat(failure(context)).contains(property + ": is not a property")
				.contains("did you mean '" + meant + "'?"));
	}

	@Test
	void theMisspeltAlgorithmAndLeaseOfTheIssueStopStartUpTogether() {
		// both started before, the limit a plain token bucket without a lease
		this.runner.withPropertyValues(LIMIT + "algoritm=sliding-window-log", LIMIT + "leese=50%")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "algoritm: is not a property: ratelimit.plans.free.groups.search[0] has no 'algoritm'.")
				.contains("write " + LIMIT + "algorithm: did you mean 'algorithm'?")
				.contains(LIMIT + "leese: is not a property")
				.contains("write " + LIMIT + "lease: did you mean 'lease'?"));
	}

	@Test
	void theSameLimitSpeltRightStarts() {
		this.runner.withPropertyValues(LIMIT + "algorithm=sliding-window-log", LIMIT + "refill-tokens=5")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitDefinition limit = context.getBean(LimitResolver.class).limitsFor("free", "search").limits().get(0);
				assertThat(limit.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
			});
	}

	@Test
	void aMisspeltPropertyInYamlIsNamedWithItsFileAndLine() throws IOException {
		List<PropertySource<?>> yaml = new YamlPropertySourceLoader().load("application.yml",
				new ByteArrayResource(("ratelimit:\n  plans:\n    free:\n      groups:\n        search:\n"
						+ "          - capacity: 5\n            refill-tokens: 1\n            refill-period: 1s\n"
						+ "            algoritm: sliding-window-log\n").getBytes(StandardCharsets.UTF_8)));
		this.runner.withInitializer((context) -> context.getEnvironment().getPropertySources().addFirst(yaml.get(0)))
			.run((context) -> assertThat(failure(context)).contains(LIMIT + "algoritm: is not a property")
				.contains("(Byte array resource [resource loaded from byte array] - 9:23)")
				.contains("did you mean 'algorithm'?"));
	}

	@Test
	void aMisspeltCommandLineArgumentStopsStartUp() {
		this.runner
			.withInitializer((context) -> context.getEnvironment().getPropertySources()
				.addFirst(new SimpleCommandLinePropertySource("--ratelimit.redis-timout=50ms")))
			.run((context) -> assertThat(failure(context)).contains("ratelimit.redis-timout: is not a property")
				.contains("write ratelimit.redis-timeout: did you mean 'redis-timeout'?"));
	}

	@Test
	void aMisspeltEnvironmentVariableStopsStartUpNamingTheVariableMeant() {
		this.runner.withInitializer((context) -> variables(context, Map.of("RATELIMIT_REDISTIMOUT", "50ms",
				"RATELIMIT_PLANS_FREE_GROUPS_SEARCH_0_ALGORITM", "fixed-window")))
			.run((context) -> assertThat(failure(context))
				.contains("RATELIMIT_REDISTIMOUT: is not a property: ratelimit has no 'redistimout' (it reads as "
						+ "ratelimit.redistimout).")
				.contains("write RATELIMIT_REDISTIMEOUT (ratelimit.redis-timeout)")
				.contains("RATELIMIT_PLANS_FREE_GROUPS_SEARCH_0_ALGORITM: is not a property")
				.contains("write RATELIMIT_PLANS_FREE_GROUPS_SEARCH_0_ALGORITHM"));
	}

	@Test
	void environmentVariablesSpringBootBindsStartAndThoseNearNoPropertyAreLeftAlone(CapturedOutput output) {
		this.runner.withInitializer((context) -> variables(context, Map.of("RATELIMIT_REDIS_TIMEOUT", "50ms",
				"RATELIMIT_GATEWAY_SERVICE_HOST", "10.0.0.1", "RATELIMIT_GATEWAY_PORT_8080_TCP_ADDR", "10.0.0.1",
				"RATELIMIT_TEST_REDIS_URL", "redis://x:6379")))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RateLimitProperties.class).getRedisTimeout()).hasMillis(50);
				assertThat(output).contains("Environment variables [RATELIMIT_GATEWAY_PORT_8080_TCP_ADDR, "
						+ "RATELIMIT_GATEWAY_SERVICE_HOST, RATELIMIT_TEST_REDIS_URL] name no ratelimit.* property");
			});
	}

	@ParameterizedTest(name = "type {0}: {1}={2}")
	@CsvSource(delimiter = '|', value = { "quota|algorithm|token-bucket|does not apply to a quota",
			"quota|capacity|0|does not apply to a quota", "concurrency|refill-tokens|0|applies to rate limits only",
			"concurrency|limit|0|applies to quotas only", "rate|max-in-flight|0|applies to concurrency limits only" })
	void aKeyOfAnotherTypeOfLimitStopsStartUpEvenWithItsDefaultValue(String type, String key, String value,
			String problem) {
		String other = "ratelimit.plans.free.groups.search[1].";
		String[] own = switch (type) {
			case "quota" -> new String[] { other + "limit=100", other + "period=day" };
			case "concurrency" -> new String[] { other + "max-in-flight=2" };
			default -> new String[] { other + "capacity=9", other + "refill-tokens=9", other + "refill-period=1s" };
		};
		this.runner.withPropertyValues(own)
			.withPropertyValues(other + "type=" + type, other + key + "=" + value)
			.run((context) -> assertThat(failure(context)).contains(other + key + ": " + problem));
	}

	@Test
	void aLeaseOnAWindowAlgorithmStopsStartUpEvenWhenOff() {
		this.runner.withPropertyValues(LIMIT + "algorithm=fixed-window", LIMIT + "refill-tokens=5", LIMIT + "lease=off")
			.run((context) -> assertThat(failure(context))
				.contains(LIMIT + "lease: applies to token buckets only, was 'off' with fixed-window."));
	}

	@Test
	void aGatewayWithAMisspeltArgumentAndVariableFailsToStartWithBothInItsReport(CapturedOutput output) {
		// a whole application as it starts from main: Spring Boot's failure analysis prints the report
		Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(GatewayTestApplication.class)
			.initializers((context) -> variables(context,
					Map.of("RATELIMIT_CIRCUITBREAKER_WAITDURATIONINOPENSTAT", "5s")))
			.properties(PLANS_AND_ROUTE)
			.properties("server.port=0", "spring.data.redis.port=9", LIMIT + "algoritm=fixed-window")
			.run("--ratelimit.redis-timout=50ms")
			.close());
		assertThat(failure).isNotNull();
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: " + LIMIT + "algoritm")
			.contains(LIMIT + "algoritm: write " + LIMIT + "algorithm: did you mean 'algorithm'?")
			.contains("Property: ratelimit.redis-timout")
			.contains("ratelimit.redis-timout: write ratelimit.redis-timeout: did you mean 'redis-timeout'?")
			.contains("Property: RATELIMIT_CIRCUITBREAKER_WAITDURATIONINOPENSTAT")
			.contains("write RATELIMIT_CIRCUITBREAKER_WAITDURATIONINOPENSTATE "
					+ "(ratelimit.circuitbreaker.wait-duration-in-open-state)");
	}

	/** The process' environment variables and these, as Spring Boot reads the environment. */
	private static void variables(ConfigurableApplicationContext context, Map<String, Object> variables) {
		Map<String, Object> all = new HashMap<>(context.getEnvironment().getSystemEnvironment());
		all.putAll(variables);
		context.getEnvironment().getPropertySources().replace(
				StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
				new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, all));
	}

}
