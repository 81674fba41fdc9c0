package io.github.ratelimit.gateway.webflux;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "after" configuration of {@code src/docs/reference/migrating-from-request-rate-limiter.md}, taken from the guide itself,
 * in a real gateway with a real Redis through real HTTP: it starts, and limits as the guide says. Only its upstream is
 * replaced (by the {@link #upstream recording one}) and {@code ratelimit.redis-timeout} raised to 5 s, so that a
 * loaded machine's slow answer is not decided by the local fallback (which writes no rate limit fields).
 */
@SpringBootTest(classes = MigrationGuideAfterTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MigrationGuideRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@DynamicPropertySource
	static void guideConfiguration(DynamicPropertyRegistry registry) {
		Map<String, Object> properties = MigrationGuide.properties("after", upstream.uri());
		assertThat(properties).containsKey("ratelimit.plans.standard.groups.search[0].capacity");
		properties.put("ratelimit.redis-timeout", "5s");
		properties.forEach((name, value) -> registry.add(name, () -> value));
	}

	@Test
	void searchWithAKnownApiKeyHasTheStandardPlansLimitInBothHeaderStyles() {
		get("/api/search/q", "key-of-client-a").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"standard-search\";q=20;w=2")
			.expectHeader().valueEquals("RateLimit", "\"standard-search\";r=19;t=1")
			.expectHeader().valueEquals("X-RateLimit-Limit", "20")
			.expectHeader().valueEquals("X-RateLimit-Remaining", "19")
			.expectHeader().valueEquals("X-RateLimit-Reset", "1");
		assertThat(upstream.received()).containsExactly("/api/search/q");
		// (its bucket key expires as soon as the bucket is full again, 100 ms later)
	}

	@Test
	void searchWithoutAKeyIsLimitedByAddressUnderTheAnonymousPlan() {
		this.client.get().uri("/api/search/q").exchange().expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"anonymous-search\";q=10;w=10")
			.expectHeader().valueEquals("RateLimit", "\"anonymous-search\";r=9;t=1");
	}

	@Test
	void theSixthLoginFromOneAddressWithinAMinuteGets429WithRetryAfterAndAProblem() {
		for (int i = 1; i <= 5; i++) {
			this.client.post().uri("/auth/login").exchange().expectStatus().isOk()
				.expectHeader().valueEquals("RateLimit-Policy", "\"anonymous-login\";q=5;w=60");
		}
		this.client.post().uri("/auth/login").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.value("Retry-After", (retryAfter) -> assertThat(Long.parseLong(retryAfter)).isBetween(1L, 12L))
			.expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody()
			.jsonPath("$.type").isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded")
			.jsonPath("$.violated-policies[0]").isEqualTo("anonymous-login");
		assertThat(upstream.received()).hasSize(5);
		// one key per limit, in the starter's names (the bucket is full again 60 s after the last login)
		assertThat(redis.command("KEYS", "*").lines()).anyMatch((key) -> key.startsWith("rl:{login|ip:"))
			.noneMatch((key) -> key.startsWith("request_rate_limiter."));
	}

}
