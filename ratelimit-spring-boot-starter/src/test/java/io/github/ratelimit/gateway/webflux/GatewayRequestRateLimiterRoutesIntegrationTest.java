package io.github.ratelimit.gateway.webflux;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "before" configuration of {@code src/docs/reference/migrating-from-request-rate-limiter.md}: Gateway's own
 * {@code RequestRateLimiter} with {@code RedisRateLimiter}, taken from the guide with its key resolvers
 * ({@link MigrationGuideBeforeTestApplication}), in a real gateway with a real Redis, with the starter running
 * alongside as during a migration (it only needs its anonymous plan to start). What it checks is what the guide
 * tells of Gateway's filter: its header fields, its bodiless 429 without Retry-After, its 403 for a request without
 * a key, its Redis keys with the client's key in clear text, and the token counts of a slow rate.
 */
@SpringBootTest(classes = MigrationGuideBeforeTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GatewayRequestRateLimiterRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@DynamicPropertySource
	static void guideConfiguration(DynamicPropertyRegistry registry) {
		Map<String, Object> properties = MigrationGuide.properties("before", upstream.uri());
		assertThat(properties).containsEntry("spring.cloud.gateway.server.webflux.routes[0].filters[0].name",
				"RequestRateLimiter");
		properties.put("ratelimit.plans.anonymous.default[0].capacity", "1");
		properties.put("ratelimit.plans.anonymous.default[0].refill-tokens", "1");
		properties.put("ratelimit.plans.anonymous.default[0].refill-period", "1s");
		properties.forEach((name, value) -> registry.add(name, () -> value));
	}

	@Test
	void theKeyResolversAreTheGuidesCode() {
		assertThat(MigrationGuide.appearsIn(MigrationGuide.block("before-java"),
				Path.of("src/test/java/io/github/ratelimit/gateway/webflux/MigrationGuideBeforeTestApplication.java")))
			.as("the guide's key resolvers in MigrationGuideBeforeTestApplication").isTrue();
	}

	@Test
	void searchIsLimitedPerApiKeyWithGatewaysHeaderFieldsAndTheKeyInItsRedisKeys() {
		get("/api/search/q", "key-of-client-a").expectStatus().isOk()
			.expectHeader().valueEquals("X-RateLimit-Remaining", "19")
			.expectHeader().valueEquals("X-RateLimit-Replenish-Rate", "10")
			.expectHeader().valueEquals("X-RateLimit-Burst-Capacity", "20")
			.expectHeader().valueEquals("X-RateLimit-Requested-Tokens", "1")
			.expectHeader().doesNotExist("RateLimit");
		assertThat(redis.command("KEYS", "request_rate_limiter.*").lines()).containsExactlyInAnyOrder(
				"request_rate_limiter.{search.key-of-client-a}.tokens",
				"request_rate_limiter.{search.key-of-client-a}.timestamp");
		// 2 x burstCapacity / replenishRate seconds
		assertThat(Long.parseLong(redis.command("TTL", "request_rate_limiter.{search.key-of-client-a}.tokens")))
			.isBetween(1L, 4L);
	}

	@Test
	void aSearchWithoutAKeyIsRefusedWith403() {
		this.client.get().uri("/api/search/q").exchange().expectStatus().isForbidden().expectBody().isEmpty();
		assertThat(upstream.received()).isEmpty();
	}

	@Test
	void theSixthLoginWithinAMinuteGetsABodiless429WithoutRetryAfter() {
		this.client.post().uri("/auth/login").exchange().expectStatus().isOk()
			.expectHeader().valueEquals("X-RateLimit-Remaining", "240")
			.expectHeader().valueEquals("X-RateLimit-Requested-Tokens", "60");
		for (int i = 2; i <= 5; i++) {
			this.client.post().uri("/auth/login").exchange().expectStatus().isOk();
		}
		this.client.post().uri("/auth/login").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().doesNotExist("Retry-After")
			.expectHeader().exists("X-RateLimit-Remaining")
			.expectBody().isEmpty();
		assertThat(redis.command("KEYS", "request_rate_limiter.{login.*").lines())
			.contains("request_rate_limiter.{login.127.0.0.1}.tokens");
		// 2 x 300 / 5 seconds
		assertThat(Long.parseLong(redis.command("TTL", "request_rate_limiter.{login.127.0.0.1}.tokens")))
			.isBetween(100L, 120L);
	}

}
