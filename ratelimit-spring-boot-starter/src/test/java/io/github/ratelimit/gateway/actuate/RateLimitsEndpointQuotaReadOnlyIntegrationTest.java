package io.github.ratelimit.gateway.actuate;

import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

/**
 * Where the {@code ratelimits} endpoint is read-only ({@code management.endpoint.ratelimits.access=read-only}, its
 * default), a quota is read but neither topped up nor reset: Boot maps no write operation, and the quota's use stays.
 */
@ActiveProfiles({ "gateway-it", "observability-it", "quota-endpoint-it" })
@TestPropertySource(properties = "management.endpoint.ratelimits.access=read-only")
class RateLimitsEndpointQuotaReadOnlyIntegrationTest extends BaseRouteIntegrationTest {

	@Test
	void aQuotaIsNeitherToppedUpNorResetWhereWritesAreNotAllowed() {
		for (int i = 0; i < 5; i++) {
			get("/quota/" + i, "key-one").expectStatus().isOk();
		}
		get("/quota/5", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		this.client.post().uri("/actuator/ratelimits/quota?apiKey=key-one&policy=free-quota-day&tokens=3")
			.contentType(MediaType.APPLICATION_JSON)
			.exchange()
			.expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
		this.client.delete().uri("/actuator/ratelimits/quota?apiKey=key-one").exchange()
			.expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
		this.client.get().uri("/actuator/ratelimits/quota?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.buckets[1].used").isEqualTo(5).jsonPath("$.buckets[1].remaining").isEqualTo(0);
		this.overLimitCache.clear(); // only Redis decides the next request
		get("/quota/6", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

}
