package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract cases of the WebFlux {@code RateLimit} filter, through a real Gateway Server MVC (Tomcat, platform
 * request threads; {@link ServerMvcVirtualThreadsRoutesIntegrationTest} runs them again on virtual threads): the
 * same status codes, header fields and problem bodies, byte for byte, for configured and Java routes alike.
 */
class ServerMvcRoutesIntegrationTest extends ServerMvcRouteIntegrationTest {

	/** Whether the gateway serves requests on virtual threads. */
	boolean virtualThreads() {
		return false;
	}

	@Test
	void requestsRunOnTheConfiguredKindOfThread() {
		HttpResponse<String> response = get("/thread", "X-API-Key", "key-one");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue(ServerMvcTestApplication.VIRTUAL_THREAD))
			.contains(Boolean.toString(virtualThreads()));
		// a response of a route's own handler (read-only headers) carries the fields too
		assertThat(response.headers().firstValue("RateLimit-Policy")).contains("\"free-fast\";q=2000;w=1");
	}

	@Test
	void allowedRequestsGoUpstreamWithTheIetfFields() {
		HttpResponse<String> response = get("/a/1?q=x", "X-API-Key", "key-one");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("upstream");
		assertThat(response.headers().firstValue("RateLimit-Policy")).contains("\"free-a\";q=2;w=120");
		assertThat(response.headers().firstValue("RateLimit").orElseThrow())
			.matches(aboutRateLimit("\"free-a\";r=1;t=60"));
		assertThat(upstream.received()).containsExactly("/a/1?q=x");
	}

	@Test
	void deniedRequestGets429WithRetryAfterAndTheSameProblemBodyAsOnWebFlux() {
		assertThat(get("/a/1", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		assertThat(get("/a/2", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get("/a/3", "X-API-Key", "key-one");
		assertThat(denied.statusCode()).isEqualTo(429);
		// one token a minute: 60 s, less whole seconds a loaded machine let pass since the first request
		String retryAfter = denied.headers().firstValue("Retry-After").orElseThrow();
		assertThat(Long.parseLong(retryAfter)).isBetween(55L, 60L);
		assertThat(denied.headers().firstValue("RateLimit-Policy")).contains("\"free-a\";q=2;w=120");
		assertThat(denied.headers().firstValue("RateLimit").orElseThrow())
			.matches(aboutRateLimit("\"free-a\";r=0;t=120"));
		assertThat(denied.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(denied.body()).isEqualTo("{\"type\":\"" + RateLimitProblems.QUOTA_EXCEEDED + "\","
				+ "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,"
				+ "\"detail\":\"Quota exceeded for free-a; retry after " + retryAfter + " s.\",\"instance\":\"/a/3\","
				+ "\"violated-policies\":[\"free-a\"]}");
		assertThat(denied.headers().firstValueAsLong("Content-Length")).hasValue(denied.body().length());
		assertThat(upstream.received()).containsExactly("/a/1", "/a/2");
	}

	@Test
	void retryAfterIsExact() {
		// one token per 3 s: the denial's Retry-After is the whole seconds until the next token, 3 less the time
		// between the two requests (a loaded machine once let more than a second pass), and waiting it succeeds
		long start = System.nanoTime();
		assertThat(get("/slow/1", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get("/slow/2", "X-API-Key", "key-one");
		long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
		assertThat(denied.statusCode()).isEqualTo(429);
		long retryAfter = Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow());
		assertThat(retryAfter).isBetween(Math.max(1, (3_000 - elapsedMillis + 999) / 1_000), 3L);
		letTimePass(Duration.ofSeconds(retryAfter));
		assertThat(get("/slow/3", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
	}

	@Test
	void allLimitsMustAllowAndADenialConsumesNothing() {
		HttpResponse<String> first = get("/multi/1", "X-API-Key", "key-one");
		assertThat(first.headers().firstValue("RateLimit-Policy"))
			.contains("\"free-multi-1m\";q=3;w=60, \"free-multi-1h\";q=2;w=3600");
		assertThat(get("/multi/2", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		for (int i = 3; i <= 4; i++) {
			HttpResponse<String> denied = get("/multi/" + i, "X-API-Key", "key-one");
			assertThat(denied.statusCode()).isEqualTo(429);
			assertThat(denied.headers().firstValue("RateLimit").orElseThrow())
				.matches(aboutRateLimit("\"free-multi-1m\";r=1;t=40, \"free-multi-1h\";r=0;t=3600"));
			assertThat(denied.body()).contains("\"violated-policies\":[\"free-multi-1h\"]");
		}
	}

	@Test
	void configuredAndJavaRoutesOfOneGroupShareTheClientsBucket() {
		assertThat(get("/a/1", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		assertThat(get("/java/a/1", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get("/java/a/2", "X-API-Key", "key-one");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.body()).contains("\"instance\":\"/java/a/2\"");
		assertThat(get("/a/2", "X-API-Key", "key-one").statusCode()).isEqualTo(429);
		// another key has buckets of its own
		assertThat(get("/java/a/3", "X-API-Key", "key-two").statusCode()).isEqualTo(200);
	}

	@Test
	void keyByIpTrustsOnlyTheConfiguredProxyHop() {
		// one trusted proxy: the rightmost X-Forwarded-For entry is the client; what the client wrote is ignored
		assertThat(get("/ip/1", "X-Forwarded-For", "6.6.6.6, 198.51.100.7").statusCode()).isEqualTo(200);
		HttpResponse<String> second = get("/ip/2", "X-Forwarded-For", "7.7.7.7, 198.51.100.7");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("RateLimit-Policy")).contains("\"anonymous-ip\";q=2;w=120");
		assertThat(get("/ip/3", "X-Forwarded-For", "8.8.8.8, 198.51.100.7").statusCode()).isEqualTo(429);
		assertThat(get("/ip/4", "X-Forwarded-For", "198.51.100.8").statusCode()).isEqualTo(200);
		List<String> keys = List.of(redis.command("KEYS", "rl:{*").split("\n"));
		assertThat(keys).containsExactlyInAnyOrder("rl:{ip|ip:198.51.100.7}:0", "rl:{ip|ip:198.51.100.8}:0");
	}

	@Test
	void aMissingKeyIsLimitedByAddressAndAnAmbiguousOneIsRefused() {
		HttpResponse<String> byAddress = get("/a/1");
		assertThat(byAddress.statusCode()).isEqualTo(200);
		assertThat(byAddress.headers().firstValue("RateLimit-Policy")).contains("\"anonymous-a\";q=2;w=120");
		HttpResponse<String> ambiguous = get("/a/2", "X-API-Key", "key-one", "X-API-Key", "key-two");
		assertThat(ambiguous.statusCode()).isEqualTo(400);
		assertThat(ambiguous.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(ambiguous.body()).startsWith("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,")
			.contains("more than one X-API-Key value").doesNotContain("key-one").doesNotContain("key-two");
		assertThat(get("/a/3", "X-API_Key", "key-one").statusCode()).isEqualTo(400);
		assertThat(upstream.received()).containsExactly("/a/1");
	}

	@Test
	void keyByHeaderLimitsEachTenant() {
		assertThat(get("/tenants/1", "X-Tenant-Id", "acme").statusCode()).isEqualTo(200);
		assertThat(get("/tenants/2", "X-Tenant-Id", "acme").statusCode()).isEqualTo(200);
		assertThat(get("/tenants/3", "X-Tenant-Id", "acme").statusCode()).isEqualTo(429);
		assertThat(get("/tenants/4", "X-Tenant-Id", "globex").statusCode()).isEqualTo(200);
	}

	@Test
	void aPathThatIsNotCanonicalIsRefusedBeforeAnyRouteMatches() {
		HttpResponse<String> refused = get("/a//x", "X-API-Key", "key-one");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(refused.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(refused.body()).contains("\"instance\":\"/a//x\"");
		assertThat(get("/a/%2e%2e/ip/x", "X-API-Key", "key-one").statusCode()).isEqualTo(400);
		assertThat(upstream.received()).isEmpty();
	}

}
