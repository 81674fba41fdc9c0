package io.github.ratelimit.gateway.actuate;


import io.github.ratelimit.gateway.protection.HeldPlaces;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upstream protections in the {@code rateLimiter} health component, through real HTTP into a real gateway with a
 * real Redis (profiles {@code gateway-it} and {@code observability-it}: {@code orders-backend} fixed at 4,
 * {@code search-backend} adaptive with gradient in shadow mode; the context of
 * {@code ProtectionMetersRoutesIntegrationTest}). Places are filled by permits the test takes from the gateway's own
 * protection.
 */
@ActiveProfiles({ "gateway-it", "observability-it" })
class RateLimiterHealthProtectionsIntegrationTest extends BaseRouteIntegrationTest {

	private static final String ORDERS = "$.components.rateLimiter.details.protections['orders-backend']";

	private static final String SEARCH = "$.components.rateLimiter.details.protections['search-backend']";

	@Autowired
	UpstreamProtections protections;

	@RegisterExtension
	final HeldPlaces held = new HeldPlaces();

	@Test
	void healthShowsEachProtectionsLimitKindBoundsRequestsInFlightAndShadow() {
		this.held.hold(this.protections.get("orders-backend"), Priority.HIGH, 1);
		this.held.hold(this.protections.get("orders-backend"), Priority.LOW, 2);

		this.client.get().uri("/actuator/health").exchange().expectStatus().isOk().expectBody()
			.jsonPath(ORDERS + ".kind").isEqualTo("fixed")
			.jsonPath(ORDERS + ".limit").isEqualTo(4)
			.jsonPath(ORDERS + ".min").doesNotExist()
			.jsonPath(ORDERS + ".algorithm").doesNotExist()
			.jsonPath(ORDERS + ".inFlight.critical").isEqualTo(0)
			.jsonPath(ORDERS + ".inFlight.high").isEqualTo(1)
			.jsonPath(ORDERS + ".inFlight.normal").isEqualTo(0)
			.jsonPath(ORDERS + ".inFlight.low").isEqualTo(2)
			.jsonPath(ORDERS + ".shadow").isEqualTo(false)
			.jsonPath(SEARCH + ".kind").isEqualTo("adaptive")
			.jsonPath(SEARCH + ".algorithm").isEqualTo("gradient")
			.jsonPath(SEARCH + ".min").isEqualTo(2)
			.jsonPath(SEARCH + ".max").isEqualTo(50)
			.jsonPath(SEARCH + ".limit")
			.value((Integer limit) -> assertThat(limit).isBetween(2, 50))
			.jsonPath(SEARCH + ".shadow").isEqualTo(true);
	}

	@Test
	void aProtectionThatShedsLeavesTheComponentUp() {
		for (int i = 0; i < 4; i++) {
			this.held.hold(this.protections.get("orders-backend"), Priority.LOW, 1);
		}
		get("/protected/1", "key-one").expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);

		this.client.get().uri("/actuator/health").exchange().expectStatus().isOk().expectBody()
			.jsonPath("$.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.details.decisions").isEqualTo("redis")
			.jsonPath(ORDERS + ".inFlight.low").isEqualTo(4);
	}

}
