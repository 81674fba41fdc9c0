package io.github.ratelimit.gateway.webflux;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One identity per request, through a real gateway ({@code trusted-proxies: 1}) to a real recording upstream:
 * ambiguous API keys are refused, several X-Forwarded-For lines are combined in order, and no X-Forwarded-For entry
 * that is not an IP literal is ever looked up or trusted.
 */
@ActiveProfiles("paths-it")
class ClientIdentityRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Test
	void twoApiKeyHeaderLinesAreRefused() {
		RawHttp.Response response = send("GET", "/api/search/x", "X-API-Key: key-one", "X-API-Key: key-two");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.header("Content-Type")).isEqualTo("application/problem+json");
		assertThat(response.body()).contains("more than one X-API-Key value").doesNotContain("key-one", "key-two");
		// the same key twice is no less ambiguous in shape, and a comma-separated list is two keys
		assertThat(send("GET", "/api/search/x", "X-API-Key: key-one", "x-api-key: key-one").status()).isEqualTo(400);
		assertThat(send("GET", "/api/search/x", "X-API-Key: key-one, key-two").status()).isEqualTo(400);
		assertThat(send("GET", "/api/search/x", "X-API-Key: key-one,").status()).isEqualTo(400);
		assertThat(upstream.received()).isEmpty();
		// nothing was consumed: one key on one line is admitted with the whole bucket left
		assertThat(send("GET", "/api/search/x", "X-API-Key: key-one").header("RateLimit"))
			.matches(aboutRateLimit("\"free-search\";r=4;t=60"));
	}

	@Test
	void lookAlikeHeadersAndKeysUpstreamsWouldReadDifferentlyAreRefused() {
		// CGI and WSGI upstreams read X_API_KEY as X-API-Key; Python, JavaScript and .NET trim U+00A0 and U+0085
		for (String[] headers : new String[][] { { "X_API_KEY: key-one" }, { "x_api_key: key-one" },
				{ "X-API_KEY: key-one" }, { "X-API-Key: key-one", "X_API_KEY: key-two" },
				{ "X-API-Key: key-one\u00a0" }, { "X-API-Key: key-one\u0085" }, { "X-API-Key: key one" } }) {
			RawHttp.Response response = send("GET", "/api/search/x", headers);
			assertThat(response.status()).as(String.join(" | ", headers)).isEqualTo(400);
			assertThat(response.body()).doesNotContain("key-one", "key-two");
		}
		assertThat(upstream.received()).isEmpty();
		// spaces and tabs around the value are not part of it (RFC 9110 section 5.5): the same client
		assertThat(send("GET", "/api/search/x", "X-API-Key: \tkey-one \t").header("RateLimit"))
			.matches(aboutRateLimit("\"free-search\";r=4;t=60"));
		assertThat(send("GET", "/api/search/x", "X-API-Key: key-one").header("RateLimit"))
			.matches(aboutRateLimit("\"free-search\";r=3;t=120"));
	}

	@Test
	void routesLimitedByAddressDoNotReadTheApiKey() {
		RawHttp.Response response = send("GET", "/public/x", "X-API-Key: key-one", "X-API-Key: key-two");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.header("RateLimit")).matches(aboutRateLimit("\"anonymous-public\";r=99;t=60"));
	}

	@Test
	void severalForwardedForLinesAreCombinedBeforeTheTrustedHopIsTaken() {
		// the client wrote a line of its own, the proxy added one: the client is the proxy's entry, 198.51.100.7
		assertThat(send("GET", "/public/x", "X-Forwarded-For: 6.6.6.6", "X-Forwarded-For: 198.51.100.7")
			.header("RateLimit")).matches(aboutRateLimit("\"anonymous-public\";r=99;t=60"));
		assertThat(send("GET", "/public/x", "X-Forwarded-For: 7.7.7.7, 198.51.100.7").header("RateLimit"))
			.matches(aboutRateLimit("\"anonymous-public\";r=98;t=120"));
		assertThat(send("GET", "/public/x", "X-Forwarded-For: 198.51.100.7").header("RateLimit"))
			.matches(aboutRateLimit("\"anonymous-public\";r=97;t=180"));
		// not the proxy's (peer's) own bucket, which all such requests shared before
		assertThat(send("GET", "/public/x").header("RateLimit")).matches(aboutRateLimit("\"anonymous-public\";r=99;t=60"));
	}

	@Test
	void entriesThatAreNotIpLiteralsCountAsThePeerAndAreNeverLookedUp() {
		// ".5:6" reached a host name lookup before; "localhost" would be resolved to 127.0.0.1
		assertThat(RawHttp.send(this.port, "127.0.0.9", "GET", "/public/x", "X-Forwarded-For: .5:6")
			.header("RateLimit")).matches(aboutRateLimit("\"anonymous-public\";r=99;t=60"));
		assertThat(RawHttp.send(this.port, "127.0.0.9", "GET", "/public/x", "X-Forwarded-For: 10.0.0.1, localhost")
			.header("RateLimit")).matches(aboutRateLimit("\"anonymous-public\";r=98;t=120"));
		assertThat(RawHttp.send(this.port, "127.0.0.9", "GET", "/public/x").header("RateLimit"))
			.matches(aboutRateLimit("\"anonymous-public\";r=97;t=180"));
		// 127.0.0.1's bucket was not touched
		assertThat(send("GET", "/public/x", "X-Forwarded-For: 127.0.0.1").header("RateLimit"))
			.matches(aboutRateLimit("\"anonymous-public\";r=99;t=60"));
	}

}
