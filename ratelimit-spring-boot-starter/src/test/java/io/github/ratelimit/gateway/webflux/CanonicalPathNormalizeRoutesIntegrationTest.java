package io.github.ratelimit.gateway.webflux;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.non-canonical-paths: normalize}, through a real gateway to a real recording upstream: empty
 * segments, dot segments and encoded dots are repaired before route matching, so every spelling of a path is
 * counted in the canonical path's bucket and the upstream receives the canonical path; what has no canonical form
 * (encoded '/', ';', encoded '%', ...) is still refused.
 */
@TestPropertySource(properties = "ratelimit.non-canonical-paths=normalize")
@ActiveProfiles("paths-it")
class CanonicalPathNormalizeRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final String KEY = "X-API-Key: key-one";

	@Test
	void everySpellingIsCountedInTheCanonicalPathsBucket() {
		List<String> spellings = List.of("/api/search/x", "/api//search/x", "/api/./search/x", "/api/%2e/search/x",
				"//api/search/x", "/api/x/../search/x", "/api/x/%2E%2e/search/x", "/api/search/x/y/..",
				"/api/search/./x", "/api/search//x", "/api/x/.%2e/search/x", "/api/search/x");
		StringBuilder statuses = new StringBuilder();
		for (String path : spellings) {
			RawHttp.Response response = send("GET", path, KEY);
			statuses.append(response.status()).append(' ');
			assertThat(response.header("RateLimit-Policy")).as(path).isEqualTo("\"free-search\";q=5;w=300");
		}
		assertThat(statuses.toString().strip()).isEqualTo("200 200 200 200 200 429 429 429 429 429 429 429");
		assertThat(upstream.received()).containsExactly("/api/search/x", "/api/search/x", "/api/search/x",
				"/api/search/x", "/api/search/x");
	}

	@Test
	void aTraversalToTheLoginIsLimitedAsTheLoginAndForwardedAsIt() {
		RawHttp.Response response = send("POST", "/public/../auth/login?next=%2Fhome");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.header("RateLimit")).isEqualTo("\"anonymous-login\";r=4;t=180");
		assertThat(upstream.received()).containsExactly("/auth/login?next=%2Fhome");
	}

	@Test
	void pathsWithoutACanonicalFormAreStillRefused() {
		for (String path : List.of("/api/search%2Fx", "/public/..;/auth/login", "/api/search%252e%252e/x",
				"/api/search;x", "/api/search%5Cx", "/api/search/%C0%AE/x")) {
			RawHttp.Response response = send("GET", path, KEY);
			assertThat(response.status()).as(path).isEqualTo(400);
			assertThat(response.header("Content-Type")).as(path).isEqualTo("application/problem+json");
		}
		assertThat(upstream.received()).isEmpty();
	}

}
