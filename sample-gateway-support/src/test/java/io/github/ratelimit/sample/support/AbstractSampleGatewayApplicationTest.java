package io.github.ratelimit.sample.support;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A sample gateway as configured in its application.yml, against a real Redis, over real HTTP: what both samples
 * answer alike. A sample's subclass is a {@code @SpringBootTest} with a random port and adds its own tests.
 */
@ExtendWith(RedisExtension.class)
public abstract class AbstractSampleGatewayApplicationTest {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> TestRedis.shared().host());
		registry.add("spring.data.redis.port", () -> TestRedis.shared().port());
	}

	/** The port requests are served on. */
	@LocalServerPort
	protected int port;

	/** The actuator's own port (management.server.port). */
	@LocalManagementPort
	protected int managementPort;

	@Autowired
	private AbstractRedisStartupCheck<?> redisStartupCheck;

	/** A client of {@link #port}. */
	protected RestTestClient client;

	/** A client of {@link #managementPort}: the only place the actuator answers. */
	protected RestTestClient management;

	@BeforeEach
	void client() {
		this.client = SampleGateways.client(this.port);
		this.management = SampleGateways.client(this.managementPort);
	}

	@Test
	void demoUpstreamAnswersThroughTheGatewayWithTheRateLimitFields() {
		EntityExchangeResult<String> result = SampleGateways.get(this.client, "/api/orders", "demo-free-key");

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
		assertThat(result.getResponseBody())
			.isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/api/orders\"}");
		// 'RateLimit' without a group on the 'api' route: the route id is the group; the free plan's defaults apply.
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-api-1s\";q=20;w=2, \"free-api-1d\";q=10000;w=86400");
		assertThat(result.getResponseHeaders().getFirst("RateLimit"))
			.matches("\"free-api-1s\";r=19;t=\\d+, \"free-api-1d\";r=9999;t=\\d+");
	}

	@Test
	void methodBodyAndPathReachTheUpstreamUnchanged() {
		EntityExchangeResult<String> result = this.client.post()
			.uri("/api/search/x?q=a")
			.header(SampleGateways.API_KEY_HEADER, "demo-pro-key")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"q\":\"a\"}")
			.exchange()
			.expectBody(String.class)
			.returnResult();

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseBody())
			.isEqualTo("{\"upstream\":\"demo\",\"method\":\"POST\",\"path\":\"/api/search/x\"}");
		// The pro plan has no search limits: its default applies, under the search group's name.
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"pro-search\";q=200;w=2");
	}

	@Test
	void unknownApiKeyIsLimitedByAddressUnderTheAnonymousPlan() {
		EntityExchangeResult<String> result = SampleGateways.get(this.client, "/api/orders", "no-such-key");

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"anonymous-api\";q=60;w=60");
	}

	/**
	 * Only failed logins ({@code 401}) count. In the Server MVC sample the login route is the one built with the Java
	 * DSL (LoginRouteConfiguration).
	 */
	@Test
	void failedLoginsAreLimitedByAddressToFivePerQuarterHourWhateverTheApiKey() {
		EntityExchangeResult<String> succeeded = login("demo");
		assertThat(succeeded.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(succeeded.getResponseBody()).contains("\"path\":\"/auth/login\"");
		assertThat(succeeded.getResponseHeaders().getFirst("RateLimit")).startsWith("\"anonymous-login\";r=4;");
		// its token is given back once the answer is over
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tokens("login", "ip=127.0.0.1", 0))
			.isEqualTo(5.0));

		for (int i = 1; i <= 5; i++) {
			EntityExchangeResult<String> failed = login(i % 2 == 0 ? "wrong" : null);
			assertThat(failed.getStatus()).as("failed login %d", i).isEqualTo(HttpStatus.UNAUTHORIZED);
			assertThat(failed.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"anonymous-login\";q=5;w=900");
			assertThat(failed.getResponseHeaders().getFirst("RateLimit"))
				.startsWith("\"anonymous-login\";r=" + (5 - i) + ";");
		}

		EntityExchangeResult<String> denied = login("demo");

		assertThat(denied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// One token comes back every 3 minutes.
		assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"))).isBetween(170L, 180L);
		List<String> violated = JsonPath.read(denied.getResponseBody(), "$['violated-policies']");
		assertThat(violated).containsExactly("anonymous-login");
		this.management.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.routes.login.keyBy").isEqualTo("IP")
			.jsonPath("$.routes.login.critical").isEqualTo(true);
	}

	/**
	 * Clients without an API key may fetch 3 reports per calendar day (UTC): the fourth is refused until midnight, with
	 * a problem body naming the quota.
	 */
	@Test
	void anonymousReportsAreHeldToThreePerDayUntilMidnightUtc() {
		for (int i = 1; i <= 3; i++) {
			EntityExchangeResult<String> report = SampleGateways.get(this.client, "/api/reports/daily", null);
			assertThat(report.getStatus()).as("report %d", i).isEqualTo(HttpStatus.OK);
			assertThat(report.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"anonymous-reports-day\";q=3;w=86400");
			assertThat(report.getResponseHeaders().getFirst("RateLimit"))
				.matches("\"anonymous-reports-day\";r=" + (3 - i) + ";t=\\d+");
		}

		EntityExchangeResult<String> denied = SampleGateways.get(this.client, "/api/reports/daily", null);
		long untilMidnight = Duration
			.between(Instant.now(), LocalDate.now(ZoneOffset.UTC).plusDays(1).atStartOfDay(ZoneOffset.UTC))
			.toSeconds();

		assertThat(denied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(denied.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After")))
			.isBetween(untilMidnight - 2, untilMidnight + 2);
		String rateLimit = denied.getResponseHeaders().getFirst("RateLimit");
		assertThat(rateLimit).startsWith("\"anonymous-reports-day\";r=0;t=");
		assertThat(Long.parseLong(rateLimit.substring(rateLimit.indexOf(";t=") + 3)))
			.isBetween(untilMidnight - 2, untilMidnight + 2);
		assertThat(JsonPath.<List<String>>read(denied.getResponseBody(), "$['violated-policies']"))
			.containsExactly("anonymous-reports-day");
	}

	/** A chat completion is charged the tokens its answer reports: JSON, or the last usage event of a stream. */
	@Test
	void chatCompletionsAreChargedTheTokensTheirAnswersReport() {
		long started = System.nanoTime();
		String request = "{\"model\":\"demo\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
		EntityExchangeResult<String> answer = SampleGateways.post(this.client, "/v1/chat/completions",
				"demo-free-key", request);

		assertThat(answer.getStatus()).isEqualTo(HttpStatus.OK);
		int used = JsonPath.read(answer.getResponseBody(), "$.usage.total_tokens");
		assertThat(used).isEqualTo((request.length() + 3) / 4 + 50);
		assertThat(answer.getResponseHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-chat-1m\";q=60;w=60, \"free-chat-tokens-1m\";q=2000;w=60;qu=\"tokens\"");
		// the request holds its max_tokens (50) until its answer is over
		assertThat(answer.getResponseHeaders().getFirst("RateLimit"))
			.matches("\"free-chat-1m\";r=59;t=\\d+, \"free-chat-tokens-1m\";r=1950;t=\\d+");
		awaitChatTokens(2000 - used, started);

		String streamed = "{\"model\":\"demo\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
		EntityExchangeResult<String> stream = SampleGateways.post(this.client, "/v1/chat/completions",
				"demo-free-key", streamed);

		assertThat(stream.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(stream.getResponseHeaders().getContentType()).isEqualTo(MediaType.TEXT_EVENT_STREAM);
		int streamUsed = (streamed.length() + 3) / 4 + 120;
		assertThat(stream.getResponseBody()).contains(",\"total_tokens\":" + streamUsed + "}}\n\n")
			.endsWith("data: [DONE]\n\n");
		awaitChatTokens(2000 - used - streamUsed, started);
	}

	/**
	 * Wait until the free chat tokens of {@code demo-free-key} are settled at {@code expected}, refilled by at most
	 * what has refilled since {@code started} (2,000 a minute).
	 */
	private void awaitChatTokens(long expected, long started) {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(tokens("chat", "apiKey=demo-free-key", 1)).isGreaterThan(expected - 1));
		double refilled = (System.nanoTime() - started) / 1e9 * 2000 / 60;
		assertThat(tokens("chat", "apiKey=demo-free-key", 1)).isLessThanOrEqualTo(expected + refilled + 1);
	}

	private EntityExchangeResult<String> login(@Nullable String password) {
		return this.client.post()
			.uri("/auth/login")
			.headers((headers) -> {
				headers.set(SampleGateways.API_KEY_HEADER, "demo-pro-key");
				if (password != null) {
					headers.set("X-Password", password);
				}
			})
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	/** The tokens now in a client's bucket of a group, read on the ratelimits endpoint without consuming. */
	private double tokens(String group, String client, int bucket) {
		EntityExchangeResult<String> buckets = SampleGateways.get(this.management,
				"/actuator/ratelimits/" + group + "?" + client, null);
		assertThat(buckets.getStatus()).isEqualTo(HttpStatus.OK);
		Number tokens = JsonPath.read(buckets.getResponseBody(), "$.buckets[" + bucket + "].tokens");
		return tokens.doubleValue();
	}

	@Test
	void ratelimitsEndpointListsTheRoutesOnTheManagementPort() {
		SampleGateways.get(this.client, "/api/search/x", "demo-free-key");
		this.management.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.routes.search.group").isEqualTo("search")
			.jsonPath("$.routes.search.keyBy").isEqualTo("API_KEY")
			.jsonPath("$.plans.free.groups.search[0].capacity").isEqualTo(5);
		// resetting is a write operation: not available unless management.endpoint.ratelimits.access=unrestricted
		this.management.delete().uri("/actuator/ratelimits/search?apiKey=demo-free-key").exchange()
			.expectStatus().is4xxClientError();
	}

	@Test
	void ratelimitsEndpointAnswersClientLookupsWithTheirOwnStatus() {
		SampleGateways.get(this.client, "/api/search/x", "demo-free-key");
		// show-clients: always on the management port (the operator boundary): lookups get the real answers
		this.management.get().uri("/actuator/ratelimits/search?apiKey=demo-free-key").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.buckets[0].policy").isEqualTo("free-search");
		this.management.get().uri("/actuator/ratelimits/search?apiKey=never-issued").exchange()
			.expectStatus().isNotFound();
	}

	@Test
	void managementPortListensOnLoopbackOnly() throws IOException {
		// 127.0.0.2 is this host too (Linux loopback), but not the address the management port is bound to
		assertThatThrownBy(() -> connect("127.0.0.2", this.managementPort)).isInstanceOf(ConnectException.class);
		connect("127.0.0.1", this.managementPort);
		connect("127.0.0.2", this.port); // the traffic port listens on every address
	}

	@Test
	void healthReportsTheLimiterDecidingFromRedis() {
		this.management.get().uri("/actuator/health").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.details.circuitBreaker").isEqualTo("CLOSED")
			.jsonPath("$.components.redis").doesNotExist();
	}

	@Test
	void startupCheckReachesRedis() {
		assertThat(this.redisStartupCheck.check().orTimeout(10, TimeUnit.SECONDS).join()).isTrue();
	}

	private static void connect(String address, int port) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(address, port), 2000);
		}
	}

}
