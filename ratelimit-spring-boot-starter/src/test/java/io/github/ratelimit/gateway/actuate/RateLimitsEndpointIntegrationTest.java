package io.github.ratelimit.gateway.actuate;


import io.github.ratelimit.gateway.client.ApiKeyHasher;
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
 * The {@code ratelimits} endpoint (configuration overview with the upstream protections, one client's buckets,
 * reset), through real HTTP into a real gateway with a real Redis (profiles {@code gateway-it} and
 * {@code observability-it}; the same context as {@code RateLimitMetricsRoutesIntegrationTest}).
 */
@ActiveProfiles({ "gateway-it", "observability-it" })
class RateLimitsEndpointIntegrationTest extends BaseRouteIntegrationTest {

	@Autowired
	UpstreamProtections protections;

	@RegisterExtension
	final HeldPlaces held = new HeldPlaces();

	@Test
	void endpointShowsConfigurationWithoutApiKeys() {
		this.client.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.plans.free.groups.a[0].capacity").isEqualTo(2)
			.jsonPath("$.plans.free.default[0].policy").isEqualTo("free-default")
			// a limit that takes leases says so; the others have no such field
			.jsonPath("$.plans.free.groups.leased[0].lease").isEqualTo("20%")
			.jsonPath("$.plans.free.groups.a[0].lease").doesNotExist()
			.jsonPath("$.routes.a.group").isEqualTo("a")
			// only key-by: header routes name a header
			.jsonPath("$.routes.a.header").doesNotExist()
			.jsonPath("$.principalPlan").isEqualTo("anonymous")
			.jsonPath("$.headerPlan").isEqualTo("anonymous")
			.jsonPath("$.routes.shadowed.shadow").isEqualTo(true)
			.jsonPath("$.groups.login.critical").isEqualTo(true)
			.jsonPath("$.staticApiKeys").isEqualTo(2)
			.consumeWith((result) -> assertThat(new String(result.getResponseBodyContent())).doesNotContain("key-one")
				.doesNotContain("\"header\""));
	}

	@Test
	void endpointReadsAndResetsOneClientsBuckets() {
		get("/a/1", "key-one");
		get("/a/2", "key-one");
		get("/a/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		this.client.get().uri("/actuator/ratelimits/a?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.client").isEqualTo("k:" + ApiKeyHasher.hash("key-one"))
			.jsonPath("$.plan").isEqualTo("free")
			.jsonPath("$.buckets[0].policy").isEqualTo("free-a")
			.jsonPath("$.buckets[0].tokens").isEqualTo(0)
			.jsonPath("$.buckets[0].timeUntilFullMs").value((Number ms) -> assertThat(ms.longValue()).isBetween(110_000L, 120_000L))
			.consumeWith((result) -> assertThat(new String(result.getResponseBodyContent())).doesNotContain("key-one"));
		this.client.delete().uri("/actuator/ratelimits/a?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.bucketsReset").isEqualTo(1);
		get("/a/4", "key-one").expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"free-a\";r=1;t=60");
		this.client.get().uri("/actuator/ratelimits/a?ip=127.0.0.1").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.client").isEqualTo("ip:127.0.0.1").jsonPath("$.buckets[0].tokens").isEqualTo(2);
	}

	@Test
	void endpointAnswersBadLookupsWith4xxAndAnErrorField() {
		this.client.get().uri("/actuator/ratelimits/a").exchange()
			.expectStatus().isBadRequest().expectBody().jsonPath("$.error").isEqualTo("give exactly one of apiKey or ip");
		this.client.get().uri("/actuator/ratelimits/a?apiKey=key-one&ip=127.0.0.1").exchange()
			.expectStatus().isBadRequest();
		this.client.get().uri("/actuator/ratelimits/a?ip=not-an-ip").exchange()
			.expectStatus().isBadRequest().expectBody().jsonPath("$.error").isEqualTo("ip must be an IPv4 or IPv6 address");
		this.client.get().uri("/actuator/ratelimits/no-such-group?ip=127.0.0.1").exchange()
			.expectStatus().isNotFound().expectBody().jsonPath("$.error").isEqualTo("unknown endpoint group 'no-such-group'");
		this.client.get().uri("/actuator/ratelimits/a?apiKey=never-issued").exchange()
			.expectStatus().isNotFound()
			.expectBody().consumeWith((result) -> assertThat(new String(result.getResponseBodyContent()))
				.contains("unknown API key").doesNotContain("never-issued"));
		this.client.delete().uri("/actuator/ratelimits/no-such-group?ip=127.0.0.1").exchange()
			.expectStatus().isNotFound();
		// an IPv6 client is looked up by the same /64 prefix the filter keys it by
		this.client.get().uri("/actuator/ratelimits/a?ip=2001:db8::1").exchange()
			.expectStatus().isOk().expectBody().jsonPath("$.client").isEqualTo("ip:2001:db8:0:0:0:0:0:0/64");
	}

	@Test
	void endpointShowsScopeAndAlgorithmAndResetLeavesTheGroupsBucket() {
		this.client.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.plans.free.groups.shared[0].scope").isEqualTo("client")
			.jsonPath("$.plans.free.groups.shared[0].algorithm").isEqualTo("token-bucket")
			.jsonPath("$.plans.free.groups.shared[1].policy").isEqualTo("shared-global-1h")
			.jsonPath("$.plans.free.groups.shared[1].scope").isEqualTo("global");
		get("/shared/1", "key-one").expectStatus().isOk();
		get("/shared/2", "key-one").expectStatus().isOk();
		this.client.get().uri("/actuator/ratelimits/shared?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.buckets[0].policy").isEqualTo("free-shared-1h")
			.jsonPath("$.buckets[0].scope").isEqualTo("client")
			.jsonPath("$.buckets[0].tokens").isEqualTo(0)
			.jsonPath("$.buckets[1].policy").isEqualTo("shared-global-1h")
			.jsonPath("$.buckets[1].scope").isEqualTo("global")
			.jsonPath("$.buckets[1].algorithm").isEqualTo("token-bucket")
			.jsonPath("$.buckets[1].tokens").isEqualTo(1);
		this.client.delete().uri("/actuator/ratelimits/shared?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.bucketsReset").isEqualTo(1)
			.jsonPath("$.globalPoliciesNotReset[0]").isEqualTo("shared-global-1h");
		// the client's own bucket is full again; the group's is not
		this.client.get().uri("/actuator/ratelimits/shared?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.buckets[0].tokens").isEqualTo(2)
			.jsonPath("$.buckets[1].tokens").isEqualTo(1);
	}

	@Test
	void endpointShowsTheProtectionsTheRoutesProtectionAndPriorityAndEachPlansPriority() {
		this.held.hold(this.protections.get("orders-backend"), Priority.LOW, 2);
		this.held.hold(this.protections.get("orders-backend"), Priority.CRITICAL, 1);
		String orders = "$.protections['orders-backend']";
		String search = "$.protections['search-backend']";
		this.client.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath(orders + ".kind").isEqualTo("fixed")
			.jsonPath(orders + ".algorithm").doesNotExist()
			.jsonPath(orders + ".min").doesNotExist()
			.jsonPath(orders + ".limit").isEqualTo(4)
			.jsonPath(orders + ".inFlight.critical").isEqualTo(1)
			.jsonPath(orders + ".inFlight.high").isEqualTo(0)
			.jsonPath(orders + ".inFlight.normal").isEqualTo(0)
			.jsonPath(orders + ".inFlight.low").isEqualTo(2)
			.jsonPath(orders + ".shadow").isEqualTo(false)
			.jsonPath(orders + ".retryAfterSeconds").isEqualTo(3)
			.jsonPath(orders + ".shares.high").isEqualTo("50%")
			.jsonPath(orders + ".shares.normal").isEqualTo("30%")
			.jsonPath(orders + ".shares.low").isEqualTo("20%")
			.jsonPath(orders + ".shares.critical").doesNotExist()
			.jsonPath(search + ".kind").isEqualTo("adaptive")
			.jsonPath(search + ".algorithm").isEqualTo("gradient")
			.jsonPath(search + ".min").isEqualTo(2)
			.jsonPath(search + ".max").isEqualTo(50)
			.jsonPath(search + ".limit").value((Integer limit) -> assertThat(limit).isBetween(2, 50))
			.jsonPath(search + ".shadow").isEqualTo(true)
			.jsonPath(search + ".retryAfterSeconds").isEqualTo(1)
			.jsonPath("$.routes['protected-login'].protect").isEqualTo("orders-backend")
			.jsonPath("$.routes['protected-login'].priority").isEqualTo("critical")
			.jsonPath("$.routes.protected.protect").isEqualTo("orders-backend")
			.jsonPath("$.routes.protected.priority").doesNotExist()
			.jsonPath("$.routes.a.protect").doesNotExist()
			.jsonPath("$.plans.free.priority").isEqualTo("low")
			.jsonPath("$.plans.anonymous.priority").isEqualTo("normal");
	}

}
