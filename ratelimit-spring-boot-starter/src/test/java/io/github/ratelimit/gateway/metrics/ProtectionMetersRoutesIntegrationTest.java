package io.github.ratelimit.gateway.metrics;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.protection.HeldPlaces;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The upstream protections' meters through real HTTP into a real gateway with a real Redis (profiles
 * {@code gateway-it} and {@code observability-it}: protection {@code orders-backend}, fixed at 4, and the adaptive
 * {@code search-backend} in shadow mode; plan {@code free} has priority {@code low}). Places are filled by permits
 * the test takes from the gateway's own protection, so that a request finds the limit full exactly when the test
 * says.
 */
@ActiveProfiles({ "gateway-it", "observability-it" })
class ProtectionMetersRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Autowired
	UpstreamProtections protections;

	@RegisterExtension
	final HeldPlaces held = new HeldPlaces();

	@Test
	void everyProtectionHasItsGaugesAndTimersFromStartUp() {
		// registered when the registry was bound, whether or not a request went through yet
		for (String protection : List.of("orders-backend", "search-backend")) {
			assertThat(this.meters.find(MicrometerRateLimitMetrics.PROTECTION_LIMIT).tag("protection", protection)
				.gauges()).hasSize(1);
			assertThat(this.meters.find(MicrometerRateLimitMetrics.PROTECTION_IN_FLIGHT).tag("protection", protection)
				.gauges()).extracting((gauge) -> gauge.getId().getTag("priority"))
				.containsExactlyInAnyOrder("critical", "high", "normal", "low");
			assertThat(this.meters.find(MicrometerRateLimitMetrics.PROTECTION_LATENCY).tag("protection", protection)
				.timers()).extracting((timer) -> timer.getId().getTag("outcome"))
				.containsExactlyInAnyOrder("answered", "dropped");
		}
		assertThat(limit("orders-backend")).isEqualTo(4);
		assertThat(limit("search-backend")).isEqualTo(protection("search-backend").limit());
	}

	@Test
	void aShedRequestIsCountedWithItsRouteGroupProtectionAndPlanPriority() {
		double before = shed("protected", "low", "false");
		fill(protection("orders-backend"), 4, Priority.LOW);
		assertThat(inFlight("orders-backend", "low")).isEqualTo(4);

		get("/protected/1", "key-one").expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
			.expectHeader().valueEquals("Retry-After", "3");
		// a critical request outranks the borrowed places: admitted, and not counted
		this.client.get().uri("/protected-login").header("X-API-Key", "key-one").exchange().expectStatus().isOk();

		assertThat(shed("protected", "low", "false") - before).isEqualTo(1);
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.SHED).tags("route", "protected", "priority", "low",
				"shadow", "false").counter();
		assertThat(counter.getId().getTag("group")).isEqualTo("fast");
		assertThat(counter.getId().getTag("protection")).isEqualTo("orders-backend");
		assertThat(this.meters.find(MicrometerRateLimitMetrics.SHED).tag("route", "protected-login").counters())
			.isEmpty();
	}

	@Test
	void aRequestForwardedInShadowModeIsCountedAsShadow() {
		double before = shed("protected-shadow", "low", "true");
		fill(protection("orders-backend"), 4, Priority.LOW);

		get("/protected-shadow/1", "key-one").expectStatus().isOk();

		assertThat(shed("protected-shadow", "low", "true") - before).isEqualTo(1);
		assertThat(shed("protected-shadow", "low", "false")).isZero();
	}

	@Test
	void answersAreLatencySamplesAndTheGatewaysOwnErrorsAreDrops() {
		long answered = latency("orders-backend", "answered").count();
		long ordersDropped = latency("orders-backend", "dropped").count();
		long dropped = latency("search-backend", "dropped").count();

		get("/protected/1", "key-one").expectStatus().isOk();
		get("/protected-refused/1", "key-one").expectStatus()
			.value((status) -> assertThat(status).isGreaterThanOrEqualTo(500));

		// the sample is taken as the answer is committed: at the latest once the client has read it
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			assertThat(latency("orders-backend", "answered").count() - answered).isEqualTo(1);
			assertThat(latency("search-backend", "dropped").count() - dropped).isEqualTo(1);
			assertThat(inFlight("orders-backend", "low")).as("every place given back once the exchange is over")
				.isZero();
		});
		assertThat(latency("orders-backend", "dropped").count()).isEqualTo(ordersDropped);
	}

	private void fill(UpstreamProtection protection, int places, Priority priority) {
		this.held.hold(protection, priority, places);
	}

	private UpstreamProtection protection(String name) {
		UpstreamProtection protection = this.protections.get(name);
		assertThat(protection).as(name).isNotNull();
		return protection;
	}

	private double limit(String protection) {
		return this.meters.get(MicrometerRateLimitMetrics.PROTECTION_LIMIT).tag("protection", protection).gauge()
			.value();
	}

	private double inFlight(String protection, String priority) {
		return this.meters.get(MicrometerRateLimitMetrics.PROTECTION_IN_FLIGHT)
			.tags("protection", protection, "priority", priority).gauge().value();
	}

	private double shed(String route, String priority, String shadow) {
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.SHED)
			.tags("route", route, "priority", priority, "shadow", shadow).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private Timer latency(String protection, String outcome) {
		return this.meters.get(MicrometerRateLimitMetrics.PROTECTION_LATENCY)
			.tags("protection", protection, "outcome", outcome).timer();
	}

}
