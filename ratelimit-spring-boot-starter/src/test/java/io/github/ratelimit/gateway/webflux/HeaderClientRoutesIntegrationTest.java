package io.github.ratelimit.gateway.webflux;

import java.util.List;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clients identified by a request header ({@code key-by: header, header: X-Tenant-Id}, profile {@code identity-it}),
 * through a real gateway to a real recording upstream, buckets in a real Redis: the value is hashed into the client
 * id under {@code ratelimit.header-plan} ({@code partner}: 4 tokens), one value per request, and requests without it
 * are limited by IP address under the anonymous plan (2 tokens).
 */
@ActiveProfiles("identity-it")
@TestPropertySource(properties = "management.endpoints.web.exposure.include=ratelimits")
class HeaderClientRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final String TENANT = "tenant-raw-4711";

	@Test
	void theHeaderValueIsTheClientWhateverTheAddressAndIsOnlyStoredHashed() {
		RawHttp.Response first = RawHttp.send(this.port, "127.0.0.1", "GET", "/tenant/x", "X-Tenant-Id: " + TENANT);
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.header("RateLimit-Policy")).isEqualTo("\"partner-tenant\";q=4;w=14400");
		assertThat(first.header("RateLimit")).matches(aboutRateLimit("\"partner-tenant\";r=3;t=3600"));
		// the same tenant from another address: the same bucket; another tenant from the first address: its own
		assertThat(RawHttp.send(this.port, "127.0.0.2", "GET", "/tenant/x", "x-tenant-id: " + TENANT)
			.header("RateLimit")).matches(aboutRateLimit("\"partner-tenant\";r=2;t=7200"));
		assertThat(RawHttp.send(this.port, "127.0.0.1", "GET", "/tenant/x", "X-Tenant-Id: tenant-other")
			.header("RateLimit")).matches(aboutRateLimit("\"partner-tenant\";r=3;t=3600"));

		List<String> keys = List.of(redis.command("KEYS", "rl:{tenant|*").split("\n"));
		// the hash of the header's name in lower case, a NUL and the value
		assertThat(keys).containsExactlyInAnyOrder(
				"rl:{tenant|h:" + ApiKeyHasher.hash("x-tenant-id\0" + TENANT) + "}:0",
				"rl:{tenant|h:" + ApiKeyHasher.hash("x-tenant-id\0tenant-other") + "}:0");
		assertThat(redis.command("KEYS", "*" + TENANT + "*")).isEmpty();
	}

	@Test
	void theRatelimitsEndpointShowsTheHeaderAndThePlans() {
		this.client.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.routes.tenant.keyBy").isEqualTo("HEADER")
			.jsonPath("$.routes.tenant.header").isEqualTo("X-Tenant-Id")
			.jsonPath("$.routes.me.keyBy").isEqualTo("PRINCIPAL")
			.jsonPath("$.routes.me.header").doesNotExist()
			.jsonPath("$.headerPlan").isEqualTo("partner")
			.jsonPath("$.principalPlan").isEqualTo("free");
	}

	@Test
	void severalValuesAndLookAlikeHeadersAreRefusedAndConsumeNothing() {
		for (String[] headers : new String[][] { { "X-Tenant-Id: " + TENANT, "X-Tenant-Id: tenant-other" },
				{ "X-Tenant-Id: " + TENANT + ", tenant-other" }, { "X_Tenant_Id: " + TENANT },
				{ "X-Tenant-Id: " + TENANT, "X-Tenant_Id: tenant-other" }, { "X-Tenant-Id: " + TENANT + "\u00a0" } }) {
			RawHttp.Response response = send("GET", "/tenant/x", headers);
			assertThat(response.status()).as(String.join(" | ", headers)).isEqualTo(400);
			assertThat(response.header("Content-Type")).isEqualTo("application/problem+json");
			assertThat(response.body()).contains("X-Tenant-Id").doesNotContain(TENANT, "tenant-other");
		}
		assertThat(upstream.received()).isEmpty();
		// nothing was consumed, neither the tenant's tokens nor the address'
		assertThat(send("GET", "/tenant/x", "X-Tenant-Id: " + TENANT).header("RateLimit"))
			.matches(aboutRateLimit("\"partner-tenant\";r=3;t=3600"));
		assertThat(send("GET", "/tenant/x").header("RateLimit"))
			.matches(aboutRateLimit("\"anonymous-tenant\";r=1;t=3600"));
	}

	@Test
	void aValueWithInnerSpacesIsOneClient() {
		RawHttp.Response response = send("GET", "/tenant/x", "X-Tenant-Id: Org One");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.header("RateLimit")).matches(aboutRateLimit("\"partner-tenant\";r=3;t=3600"));
		assertThat(redis.command("KEYS", "rl:{tenant|*"))
			.isEqualTo("rl:{tenant|h:" + ApiKeyHasher.hash("x-tenant-id\0Org One") + "}:0");
	}

	@Test
	void requestsWithoutTheHeaderAreLimitedByAddressUnderTheAnonymousPlan() {
		RawHttp.Response none = send("GET", "/tenant/x");
		assertThat(none.header("RateLimit-Policy")).isEqualTo("\"anonymous-tenant\";q=2;w=7200");
		assertThat(none.header("RateLimit")).matches(aboutRateLimit("\"anonymous-tenant\";r=1;t=3600"));
		// an empty value is no value
		assertThat(send("GET", "/tenant/x", "X-Tenant-Id: ").header("RateLimit"))
			.matches(aboutRateLimit("\"anonymous-tenant\";r=0;t=7200"));
		assertThat(send("GET", "/tenant/x").status()).isEqualTo(429);
		// another address has its own bucket, and the tenant is not held back by the address' denials
		assertThat(RawHttp.send(this.port, "127.0.0.3", "GET", "/tenant/x").status()).isEqualTo(200);
		assertThat(send("GET", "/tenant/x", "X-Tenant-Id: " + TENANT).status()).isEqualTo(200);
		assertThat(redis.command("KEYS", "rl:{tenant|ip:*")).contains("rl:{tenant|ip:127.0.0.1}:0",
				"rl:{tenant|ip:127.0.0.3}:0");
	}

}
