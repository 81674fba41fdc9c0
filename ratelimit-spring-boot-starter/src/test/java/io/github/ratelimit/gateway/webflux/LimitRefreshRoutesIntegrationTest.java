package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.context.scope.refresh.RefreshScopeRefreshedEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.http.HttpStatus;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Limits changed at runtime take effect on the next request, without a restart: the Environment changes and an
 * {@code EnvironmentChangeEvent} is published, as Spring Cloud's {@code /actuator/refresh} does; Spring Cloud's
 * {@code ConfigurationPropertiesRebinder} re-binds {@code ratelimit.*} and the starter takes the new limits into use.
 * Real HTTP, real gateway, real Redis. Its own context (the Environment is changed), closed afterwards.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.plans.free.groups.a[0].capacity=5",
		"ratelimit.plans.free.groups.a[0].refill-tokens=1", "ratelimit.plans.free.groups.a[0].refill-period=1m" })
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
class LimitRefreshRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final String CHANGES = "limit-refresh-test";

	private static final String LIMIT = "ratelimit.plans.free.groups.a[0].";

	@Autowired
	ConfigurableApplicationContext context;

	@AfterEach
	void restoreConfiguration() {
		if (this.context.getEnvironment().getPropertySources().remove(CHANGES) != null) {
			this.context.publishEvent(new EnvironmentChangeEvent(this.context, Set.of(LIMIT + "capacity")));
		}
	}

	@Test
	void changedCapacityShowsOnTheNextRequest() {
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=5;w=300");
		change(Map.of(LIMIT + "capacity", "2", LIMIT + "refill-tokens", "2", LIMIT + "refill-period", "1s"));
		redis.flushAll(); // a fresh bucket: what happens to a used one is the next test's
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=2;w=1");
	}

	@Test
	void aUsedBucketIsReadAtTheNewRateNeverAboveTheNewCapacity() {
		// one token of 5 taken at 1 per minute: the bucket is full again in 60 s
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"free-a\";r=4;t=60");
		// the new limit: 2 tokens, one every 4 s (slow enough that a loaded machine's stall between two requests does
		// not refill one: a stall of 2 s did when it was one every 2 s)
		change(Map.of(LIMIT + "capacity", "2", LIMIT + "refill-tokens", "2", LIMIT + "refill-period", "8s"));
		// the bucket keeps its time until full (60 s), at most the new bucket's own (8 s): empty, a token in 4 s
		get().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueMatches("Retry-After", "[1-4]")
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-a\";r=0;t=8"));
		this.overLimitCache.clear(); // ask Redis, not the denial this instance remembers
		// then full at the new capacity (2, not 5): two requests pass, the third is refused
		await().pollDelay(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(25)).untilAsserted(() -> get()
			.expectStatus().isOk().expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-a\";r=1;t=4")));
		get().expectStatus().isOk().expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-a\";r=0;t=8"));
		get().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueMatches("Retry-After", "[1-4]");
	}

	@Test
	void invalidChangedLimitsKeepThePreviousOnesAndAreLoggedNamingTheProperty(CapturedOutput output) {
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=5;w=300");
		change(Map.of(LIMIT + "capacity", "0", LIMIT + "refill-tokens", "1", LIMIT + "refill-period", "1m"));
		// routes are rebuilt too, as after /actuator/refresh: they must not fail on the invalid value
		this.context.publishEvent(new RefreshScopeRefreshedEvent());
		assertThat(output.getAll()).contains("previous limits stay in force")
			.contains(LIMIT + "capacity: must be between 1 and 2^53 tokens, was 0.");
		for (int i = 0; i < 3; i++) {
			get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=5;w=300");
		}
		// a valid change afterwards is taken into use (a list is replaced whole: every field of the limit is given)
		change(Map.of(LIMIT + "capacity", "7", LIMIT + "refill-tokens", "1", LIMIT + "refill-period", "1m"));
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=7;w=420");
	}

	@Test
	void aMisspeltKeyInAChangeIsRefusedLikeABadValueNamingTheKeyMeant(CapturedOutput output) {
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=5;w=300");
		// the new capacity is valid, but its algorithm is misspelt: taken, the limit would be a token bucket
		change(Map.of(LIMIT + "capacity", "7", LIMIT + "refill-tokens", "7", LIMIT + "refill-period", "1m",
				LIMIT + "algoritm", "fixed-window"));
		this.context.publishEvent(new RefreshScopeRefreshedEvent());
		assertThat(output.getAll()).contains("previous limits stay in force")
			.contains(LIMIT + "algoritm: is not a property")
			.contains("write " + LIMIT + "algorithm: did you mean 'algorithm'?");
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=5;w=300");
		// spelt right, the same change is taken into use
		change(Map.of(LIMIT + "capacity", "7", LIMIT + "refill-tokens", "7", LIMIT + "refill-period", "1m",
				LIMIT + "algorithm", "fixed-window"));
		get().expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=7;w=60");
	}

	/** Change properties the way a configuration refresh does: new values in the Environment, then the event. */
	private void change(Map<String, Object> values) {
		this.context.getEnvironment().getPropertySources().remove(CHANGES);
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(CHANGES, values));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, values.keySet()));
	}

	private WebTestClient.ResponseSpec get() {
		return this.client.get().uri("/a/x").header("X-API-Key", "key-one").exchange();
	}

}
