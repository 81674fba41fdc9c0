package io.github.ratelimit.gateway.webflux;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No spelling of a path escapes its endpoint group ({@code ratelimit.non-canonical-paths: reject}, the default),
 * through a real gateway to a real upstream that records what it receives: every path that is not canonical is
 * refused with 400 and a problem body before route matching, takes nothing from any bucket and never reaches the
 * upstream; a canonical path goes upstream exactly as it was matched and limited.
 */
@ActiveProfiles("paths-it")
class CanonicalPathRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final String KEY = "X-API-Key: key-one";

	/** Spellings that reached other groups' limits (issue 12) and their encoded and mixed-case forms. */
	static final List<String> NOT_CANONICAL = List.of("/api//search/x", "//api/search/x", "/api/search//x",
			"/api/./search/x", "/api/%2e/search/x", "/api/%2E/search/x", "/api/x/../search/x",
			"/api/x/%2e%2e/search/x", "/api/x/%2E%2e/search/x", "/api/x/.%2e/search/x", "/api/search%2Fx",
			"/api/search%2fx", "/api/search%252Fx", "/api/search\\x", "/api/search%5Cx", "/api/search%5cx",
			"/api/search;x=1/x", "/api/search%3Bx", "/api/search%3bx", "/api/search/%C0%AE%C0%AE/x",
			"/api/search%00x", "/api/search%0d%0ax", "/api/search/x/.", "/api/search/x/..", "/api/se%zzarch/x",
			"/public/../auth/login", "/public/..;/auth/login", "/public/%2e%2e/auth/login", "/public/..%2Fauth/login",
			"/auth/login;x", "/auth/login/.");

	@Test
	void everySpellingThatIsNotCanonicalIsRefusedBeforeRouting() {
		for (String path : NOT_CANONICAL) {
			for (String method : List.of("GET", "POST")) {
				RawHttp.Response response = send(method, path, KEY);
				assertThat(response.status()).as(method + " " + path).isEqualTo(400);
				assertThat(response.header("RateLimit")).as(path).isNull();
				if (isUri(path)) { // else the server refuses the request line itself (400, empty body)
					assertThat(response.header("Content-Type")).as(path).isEqualTo("application/problem+json");
					assertThat(response.body()).as(path)
						.contains("\"status\":400")
						.contains("The request path is not in canonical form: it");
				}
			}
		}
		assertThat(upstream.received()).isEmpty();
		// nothing was taken from the search, api, login or public buckets
		assertThat(send("GET", "/api/search/x", KEY).header("RateLimit")).isEqualTo("\"free-search\";r=4;t=60");
		assertThat(send("GET", "/api/other", KEY).header("RateLimit")).isEqualTo("\"free-api\";r=99;t=60");
		assertThat(send("POST", "/auth/login").header("RateLimit")).isEqualTo("\"anonymous-login\";r=4;t=180");
		assertThat(upstream.received()).containsExactly("/api/search/x", "/api/other", "/auth/login");
	}

	private static boolean isUri(String path) {
		try {
			new URI(path);
			return true;
		}
		catch (URISyntaxException ex) {
			return false;
		}
	}

	@Test
	void theIssuesReproductionAdmitsFiveInEitherSpelling() {
		// for p in /api/search/x /api//search/x; do for i in $(seq 12); do curl ... ; done; done
		StringBuilder statuses = new StringBuilder();
		for (String path : List.of("/api/search/x", "/api//search/x")) {
			for (int i = 0; i < 12; i++) {
				statuses.append(send("GET", path, KEY).status()).append(' ');
			}
			statuses.append("| ");
		}
		assertThat(statuses.toString().strip()).isEqualTo(
				"200 200 200 200 200 429 429 429 429 429 429 429 | 400 400 400 400 400 400 400 400 400 400 400 400 |");
		assertThat(upstream.received()).hasSize(5).containsOnly("/api/search/x");
	}

	@Test
	void whatGoesUpstreamIsWhatWasMatchedAndLimited() {
		// encoded characters that are not separators are matched decoded, and upstreams decode them alike
		RawHttp.Response encoded = send("GET", "/api/se%61rch/x?q=a%2Fb", KEY);
		assertThat(encoded.status()).isEqualTo(200);
		assertThat(encoded.header("RateLimit")).isEqualTo("\"free-search\";r=4;t=60");
		RawHttp.Response trailing = send("GET", "/api/search/", KEY);
		assertThat(trailing.header("RateLimit")).matches(aboutRateLimit("\"free-search\";r=3;t=120"));
		RawHttp.Response dotted = send("GET", "/api/search/v1.2/..x", KEY);
		assertThat(dotted.header("RateLimit")).matches(aboutRateLimit("\"free-search\";r=2;t=180"));
		// the query is not part of the path check: an encoded '/' there is an ordinary query character
		assertThat(upstream.received()).containsExactly("/api/se%61rch/x?q=a%2Fb", "/api/search/", "/api/search/v1.2/..x");
	}

	@Test
	void aQueryThatIsNotFullyEncodedDoesNotChangeTheForwardedPath() {
		// Gateway encodes a URI again when any part is not fully encoded: /api/search/%61bc would go up as %2561bc
		RawHttp.Response sloppy = send("GET", "/api/search/%61bc?x=[1]", KEY);
		assertThat(sloppy.header("RateLimit")).as(sloppy.toString())
			.isEqualTo("\"free-search\";r=4;t=60");
		assertThat(send("GET", "/api/search/%C3%A9?q=[", KEY).status()).isEqualTo(200);
		assertThat(upstream.received()).containsExactly("/api/search/%61bc?x=%5B1%5D",
				"/api/search/%C3%A9?q=%5B");
	}

	@Test
	void connectAndTraceAreNotRouted() {
		for (String method : List.of("CONNECT", "TRACE")) {
			RawHttp.Response response = send(method, "/public/x");
			assertThat(response.status()).as(method).isEqualTo(501);
			assertThat(response.body()).contains("The gateway does not route " + method + " requests.");
		}
		assertThat(upstream.received()).isEmpty();
		// other clients' requests go on as before
		assertThat(send("GET", "/public/y").status()).isEqualTo(200);
		assertThat(upstream.received()).containsExactly("/public/y");
	}

}
