package io.github.ratelimit.gateway.metrics;

import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import io.micrometer.core.instrument.Counter;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.quota.crossings} through real HTTP into a real gateway with a real Redis (profiles
 * {@code gateway-it} and {@code quota-meter-it}: quotas of 5 requests a year).
 */
@ActiveProfiles({ "gateway-it", "quota-meter-it" })
class QuotaCrossingsRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Test
	void eachClientCrosses80And100PercentOnceAndDenialsCountNothing() {
		double eighty = crossings("metered", "free-metered-year", "80");
		double hundred = crossings("metered", "free-metered-year", "100");
		for (int i = 1; i <= 3; i++) {
			get("/metered/" + i, "key-one").expectStatus().isOk();
			assertThat(crossings("metered", "free-metered-year", "80") - eighty).isZero();
		}
		get("/metered/4", "key-one").expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", "\"free-metered-year\";r=1;t=\\d+");
		assertThat(crossings("metered", "free-metered-year", "80") - eighty).isEqualTo(1); // 4 = ceil(80% of 5)
		assertThat(crossings("metered", "free-metered-year", "100") - hundred).isZero();
		get("/metered/5", "key-one").expectStatus().isOk();
		assertThat(crossings("metered", "free-metered-year", "80") - eighty).isEqualTo(1);
		assertThat(crossings("metered", "free-metered-year", "100") - hundred).isEqualTo(1);
		for (int i = 6; i <= 8; i++) {
			get("/metered/" + i, "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		}
		assertThat(crossings("metered", "free-metered-year", "80") - eighty).isEqualTo(1);
		assertThat(crossings("metered", "free-metered-year", "100") - hundred).isEqualTo(1);

		// another client of the plan crosses its own quota's thresholds, counted in the same series
		for (int i = 1; i <= 5; i++) {
			get("/metered/" + i, "key-two").expectStatus().isOk();
		}
		get("/metered/6", "key-two").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(crossings("metered", "free-metered-year", "80") - eighty).isEqualTo(2);
		assertThat(crossings("metered", "free-metered-year", "100") - hundred).isEqualTo(2);
	}

	@Test
	void aRequestCrossesByItsCostAndADeniedOneCrossesNothing() {
		String policy = "free-metered-heavy-year";
		double eighty = crossings("metered-heavy", policy, "80");
		double hundred = crossings("metered-heavy", policy, "100");
		get("/metered-heavy/1", "key-one").expectStatus().isOk(); // 0 -> 2
		assertThat(crossings("metered-heavy", policy, "80") - eighty).isZero();
		get("/metered-heavy/2", "key-one").expectStatus().isOk(); // 2 -> 4: crosses 80% (4)
		assertThat(crossings("metered-heavy", policy, "80") - eighty).isEqualTo(1);
		// 4 -> 6 would pass 5: denied, so the quota never reaches 100% and nothing is counted
		get("/metered-heavy/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(crossings("metered-heavy", policy, "80") - eighty).isEqualTo(1);
		assertThat(crossings("metered-heavy", policy, "100") - hundred).isZero();
	}

	@Test
	void theCountersCarryGroupPlanPolicyAndThresholdOnly() {
		for (int i = 1; i <= 5; i++) {
			get("/metered/" + i, "key-one").expectStatus().isOk();
		}
		assertThat(this.meters.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS).tag("group", "metered").counters())
			.extracting((c) -> c.getId().getTags().toString())
			.containsExactlyInAnyOrder(
					"[tag(group=metered), tag(plan=free), tag(policy=free-metered-year), tag(threshold=100)]",
					"[tag(group=metered), tag(plan=free), tag(policy=free-metered-year), tag(threshold=80)]");
	}

	private double crossings(String group, String policy, String threshold) {
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS)
			.tags("group", group, "plan", "free", "policy", policy, "threshold", threshold)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
