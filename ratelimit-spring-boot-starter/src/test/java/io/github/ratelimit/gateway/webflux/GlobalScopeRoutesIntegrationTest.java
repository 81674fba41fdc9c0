package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limit with {@code scope: global} through real HTTP into a real gateway with real Redis (group {@code shared} of
 * {@code application-gateway-it.yml}: 2 per client, 3 for the whole group, each refilled 1 per hour).
 */
@ActiveProfiles("gateway-it")
class GlobalScopeRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final String POLICY = "\"free-shared-1h\";q=2;w=7200, \"shared-global-1h\";q=3;w=10800";

	@Test
	void theGroupsQuotaIsSharedByClientsAndAGlobalDenialTakesNothingFromTheClient() {
		get("/shared/1", "key-one").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", POLICY)
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-shared-1h\";r=1;t=3600, \"shared-global-1h\";r=2;t=3600"));
		get("/shared/2", "key-one").expectStatus().isOk();
		// another client draws on the same group-wide bucket: its last token
		get("/shared/3", "key-two").expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-shared-1h\";r=1;t=3600, \"shared-global-1h\";r=0;t=10800"));
		// key-two still has a token of its own, but the group has none: 429 naming the global policy only
		get("/shared/4", "key-two").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueEquals("RateLimit-Policy", POLICY)
			// its own token was given back: r=1, as before the request
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-shared-1h\";r=1;t=3600, \"shared-global-1h\";r=0;t=10800"))
			.expectHeader().valueEquals("Retry-After", "3600")
			.expectBody()
			.jsonPath("$.violated-policies.length()").isEqualTo(1)
			.jsonPath("$.violated-policies[0]").isEqualTo("shared-global-1h");
		// the refund is real (asked in Redis, not only in the headers): key-two's own bucket holds 1 token
		assertThat(StoredTokens.of(redis::command, "rl:{shared|k:" + ApiKeyHasher.hash("key-two") + "}:0", 2, 1,
				3_600_000_000L)).isBetween(1.0, 1.01);
	}

	@Test
	void aClientDeniedByItsOwnLimitLeavesTheGroupsQuotaToOthers() {
		get("/shared/1", "key-one").expectStatus().isOk();
		get("/shared/2", "key-one").expectStatus().isOk();
		for (int i = 0; i < 3; i++) {
			this.overLimitCache.clear(); // ask Redis every time, not the over-limit cache
			get("/shared/x", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
				.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-shared-1h\";r=0;t=7200, \"shared-global-1h\";r=1;t=7200"))
				.expectBody()
				.jsonPath("$.violated-policies.length()").isEqualTo(1)
				.jsonPath("$.violated-policies[0]").isEqualTo("free-shared-1h");
		}
		// the group's third token is still there
		get("/shared/3", "key-two").expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-shared-1h\";r=1;t=3600, \"shared-global-1h\";r=0;t=10800"));
	}

}
