package io.github.ratelimit.gateway.webflux;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.client.ClientRequest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every refusal the limiter writes, pinned byte for byte through a real gateway (status line, header lines in order,
 * body with its member order): 429 from Redis and from the local fallback, 503 on a critical route with Redis down,
 * the 400s (client unidentified, ambiguous client, path not canonical) and 501 for {@code CONNECT}/{@code TRACE}.
 * Only what time changes is read loosely: a {@code RateLimit} field's {@code t} (as {@link #aboutRateLimit}) and the
 * local fallback's Retry-After, which a loaded machine may let drop by a second.
 *
 * <p>Redis is this class's own redis-server ({@link OwnRedisRouteIntegrationTest}), killed for the 503 and the
 * fallback's 429 (the fallback holds the whole limit: one instance, not learned from Redis, where other test
 * contexts may announce themselves). The group {@code multi} is given two limits of one token each here, so that
 * one request violates both. A request with the header {@code X-Test-Unaddressable} has no client address
 * ({@link UnaddressableClients}), as a request over a Unix domain socket would.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.circuit-breaker.wait-duration-in-open-state=1s",
		"ratelimit.fallback.learn-instances=false",
		"ratelimit.plans.free.groups.multi[0].capacity=1", "ratelimit.plans.free.groups.multi[0].refill-tokens=1",
		"ratelimit.plans.free.groups.multi[0].refill-period=1m", "ratelimit.plans.free.groups.multi[1].capacity=1",
		"ratelimit.plans.free.groups.multi[1].refill-tokens=1",
		"ratelimit.plans.free.groups.multi[1].refill-period=1h" })
@Import(ProblemResponsesRoutesIntegrationTest.UnaddressableClients.class)
class ProblemResponsesRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** A {@code RateLimit} header line and its value. */
	private static final Pattern RATELIMIT_LINE = Pattern.compile("(?m)^RateLimit: ([^\r\n]*)\r\n");

	@Test
	void aDenialIs429WithRetryAfterTheRateLimitFieldsAndAQuotaExceededProblem() {
		send("GET", "/a/1", "X-API-Key: key-one");
		send("GET", "/a/2", "X-API-Key: key-one");
		assertPinned(exchange("GET", "/a/3", "X-API-Key: key-one"), """
				HTTP/1.1 429 Too Many Requests
				RateLimit-Policy: "free-a";q=2;w=120
				RateLimit: "free-a";r=0;t=120
				Content-Type: application/problem+json
				Content-Length: %d
				Retry-After: 60
				connection: close
				""", "{\"type\":\"" + QUOTA_EXCEEDED + "\",\"title\":\"Request cannot be satisfied as assigned quota"
						+ " has been exceeded\",\"status\":429,\"detail\":\"Quota exceeded for free-a; retry after 60"
						+ " s.\",\"instance\":\"/a/3\",\"violated-policies\":[\"free-a\"]}");
	}

	@Test
	void aDenialByTwoLimitsNamesBothInOrder() {
		send("GET", "/multi/1", "X-API-Key: key-one");
		assertPinned(exchange("GET", "/multi/2?q=1", "X-API-Key: key-one"), """
				HTTP/1.1 429 Too Many Requests
				RateLimit-Policy: "free-multi-1m";q=1;w=60, "free-multi-1h";q=1;w=3600
				RateLimit: "free-multi-1m";r=0;t=60, "free-multi-1h";r=0;t=3600
				Content-Type: application/problem+json
				Content-Length: %d
				Retry-After: 3600
				connection: close
				""", "{\"type\":\"" + QUOTA_EXCEEDED + "\",\"title\":\"Request cannot be satisfied as assigned quota"
						+ " has been exceeded\",\"status\":429,\"detail\":\"Quota exceeded for free-multi-1m,"
						+ " free-multi-1h;"
						+ " retry after 3600 s.\",\"instance\":\"/multi/2\",\"violated-policies\":[\"free-multi-1m\","
						+ "\"free-multi-1h\"]}");
	}

	@Test
	void withRedisDownACriticalRouteIs503AndANormalRouteIsLimitedByTheFallback() {
		redis.kill();
		assertPinned(exchange("POST", "/auth/login"), """
				HTTP/1.1 503 Service Unavailable
				Content-Type: application/problem+json
				Content-Length: %d
				Retry-After: 1
				connection: close
				""", "{\"type\":\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\","
						+ "\"title\":\"Temporarily reduced capacity\",\"status\":503,\"detail\":\"The rate limiter is"
						+ " unavailable and this route fails closed; retry later.\",\"instance\":\"/auth/login\"}");
		// the fallback holds the whole anonymous capacity (2) for one instance; a client address of its own
		RawHttp.send(this.port, "127.0.0.41", "GET", "/b/1");
		RawHttp.send(this.port, "127.0.0.41", "GET", "/b/2");
		String denied = RawHttp.exchange(this.port, "127.0.0.41", "GET", "/b/3");
		// the Retry-After counts from the first request: on a loaded machine seconds may pass between the requests
		assertPinned(denied.replaceAll("(Retry-After: |retry after )5[5-9]\\b", "$160"), """
				HTTP/1.1 429 Too Many Requests
				Content-Type: application/problem+json
				Content-Length: %d
				Retry-After: 60
				connection: close
				""", "{\"type\":\"" + QUOTA_EXCEEDED + "\",\"title\":\"Request cannot be satisfied as assigned quota"
						+ " has been exceeded\",\"status\":429,\"detail\":\"Quota exceeded for anonymous-b; retry after"
						+ " 60 s.\",\"instance\":\"/b/3\",\"violated-policies\":[\"anonymous-b\"]}");
	}

	@Test
	void aRequestWithoutClientAddressIs400() {
		assertAboutBlankProblem(exchange("GET", "/b/x", "X-Test-Unaddressable: yes"), 400, "Bad Request", "/b/x",
				"The client address of this request cannot be determined, so it cannot be rate limited.");
	}

	@Test
	void anAmbiguousClientIs400NamingTheHeaderNeverTheKeys() {
		assertAboutBlankProblem(exchange("GET", "/a/x", "X-API-Key: key-one", "X-API-Key: key-two"), 400,
				"Bad Request", "/a/x", "The request carries more than one X-API-Key value (several header lines, or a"
						+ " comma-separated list); send exactly one API key.");
		assertAboutBlankProblem(exchange("GET", "/a/x", "X_API_KEY: key-one"), 400, "Bad Request", "/a/x",
				"The request carries a header named like X-API-Key with '_' for '-' (X_API_Key), which upstreams may"
						+ " read as X-API-Key; send only X-API-Key.");
	}

	@Test
	void aPathThatIsNotCanonicalIs400AsSent() {
		assertAboutBlankProblem(exchange("GET", "/a//x", "X-API-Key: key-one"), 400, "Bad Request", "/a//x",
				"The request path is not in canonical form: it contains an empty segment ('//'). Send the path"
						+ " without empty or dot segments and without encoded separators.");
		assertAboutBlankProblem(exchange("GET", "http://127.0.0.1/a/%2e%2e/b/x"), 400, "Bad Request",
				"/a/%2e%2e/b/x", "The request path is not in canonical form: it contains a dot segment ('.' or '..')."
						+ " Send the path without empty or dot segments and without encoded separators.");
	}

	@Test
	void connectAndTraceAre501() {
		for (String method : new String[] { "CONNECT", "TRACE" }) {
			assertAboutBlankProblem(exchange(method, "/a/x"), 501, "Not Implemented", "/a/x",
					"The gateway does not route " + method + " requests.");
		}
		// the authority form of CONNECT has no path: the instance is empty, not left out
		assertAboutBlankProblem(exchange("CONNECT", "example.com:443"), 501, "Not Implemented", "",
				"The gateway does not route CONNECT requests.");
	}

	private String exchange(String method, String target, String... headerLines) {
		return RawHttp.exchange(this.port, "127.0.0.1", method, target, headerLines);
	}

	/**
	 * Asserts a whole response: the head's lines (each ending CRLF; {@code %d} the body's length in bytes), an empty
	 * line, the body. A {@code RateLimit} line is compared with {@link #aboutRateLimit}, the rest exactly.
	 */
	private static void assertPinned(String actual, String head, String body) {
		String expected = head.formatted(body.getBytes(StandardCharsets.UTF_8).length).replace("\n", "\r\n") + "\r\n"
				+ body;
		Matcher expectedField = RATELIMIT_LINE.matcher(expected);
		Matcher actualField = RATELIMIT_LINE.matcher(actual);
		if (expectedField.find() && actualField.find()) {
			assertThat(actualField.group(1)).matches(aboutRateLimit(expectedField.group(1)));
			actual = actual.substring(0, actualField.start(1)) + expectedField.group(1)
					+ actual.substring(actualField.end(1));
		}
		assertThat(actual).isEqualTo(expected);
	}

	/**
	 * Asserts a whole problem response of type {@code about:blank} that closes the connection.
	 * @param actual the response
	 * @param status its status code
	 * @param reason its reason phrase, which is also the problem's title
	 * @param instance the problem's instance (the request target's path)
	 * @param detail the problem's detail, as JSON string content
	 */
	private static void assertAboutBlankProblem(String actual, int status, String reason, String instance,
			String detail) {
		assertPinned(actual, """
				HTTP/1.1 %d %s
				Content-Type: application/problem+json
				Content-Length: %%d
				connection: close
				""".formatted(status, reason), "{\"type\":\"about:blank\",\"title\":\"" + reason + "\",\"status\":"
						+ status + ",\"detail\":\"" + detail + "\",\"instance\":\"" + instance + "\"}");
	}

	/** Gives requests with the header {@code X-Test-Unaddressable} no client address. */
	@TestConfiguration(proxyBeanMethods = false)
	static class UnaddressableClients {

		@Bean
		ClientAddressResolver unaddressableClientAddressResolver() {
			return new ClientAddressResolver(1) {

				@Override
				public Optional<String> resolve(ClientRequest request) {
					return !request.headerValues("X-Test-Unaddressable").isEmpty() ? Optional.empty()
							: super.resolve(request);
				}

			};
		}

	}

}
