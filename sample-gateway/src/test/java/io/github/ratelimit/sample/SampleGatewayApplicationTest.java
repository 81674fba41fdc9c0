package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The sample gateway as configured in application.yml, against a real Redis, over real HTTP. */
@ExtendWith(RedisExtension.class)
// A generous Redis timeout: these tests check decisions from Redis, also on a loaded machine
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "ratelimit.redis-timeout=2s")
class SampleGatewayApplicationTest {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> TestRedis.shared().host());
		registry.add("spring.data.redis.port", () -> TestRedis.shared().port());
	}

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private RedisStartupCheck redisStartupCheck;

	private WebTestClient client;

	/** The actuator's own port (management.server.port): the only place the actuator answers. */
	private WebTestClient management;

	@BeforeEach
	void client() {
		this.client = Gateways.client(this.port);
		this.management = Gateways.managementClient(this.managementPort);
	}

	@Test
	void ratelimitsEndpointIsExposedReadOnlyOnTheManagementPort() {
		this.management.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.routes.search.group").isEqualTo("search");
		// show-clients: always on the management port (the operator boundary): lookups get the real answers
		this.management.get().uri("/actuator/ratelimits/search?apiKey=demo-free-key").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.buckets[0].policy").isEqualTo("free-search");
		this.management.get().uri("/actuator/ratelimits/search?apiKey=never-issued").exchange()
			.expectStatus().isNotFound();
		// resetting is a write operation: not available unless management.endpoint.ratelimits.access=unrestricted
		this.management.delete().uri("/actuator/ratelimits/search?apiKey=demo-free-key").exchange()
			.expectStatus().is4xxClientError();
	}

	@Test
	void actuatorIsNotServedOnTheTrafficPort() {
		assertThat(this.managementPort).isNotEqualTo(this.port);
		for (String path : List.of("/actuator/ratelimits", "/actuator/ratelimits/search?apiKey=demo-free-key",
				"/actuator/ratelimits/search?apiKey=never-issued", "/actuator/health", "/actuator/prometheus",
				"/actuator/gateway/routes", "/actuator")) {
			this.client.get().uri(path).exchange().expectStatus().isNotFound();
			int expected = path.endsWith("never-issued") ? 404 : 200; // unknown API key: the operator's answer
			this.management.get().uri(path).exchange().expectStatus().value((status) -> assertThat(status)
				.as("%s on the management port", path).isEqualTo(expected));
		}
	}

	@Test
	void managementPortListensOnLoopbackOnly() throws IOException {
		// 127.0.0.2 is this host too (Linux loopback), but not the address the management port is bound to
		assertThatThrownBy(() -> connect("127.0.0.2", this.managementPort)).isInstanceOf(ConnectException.class);
		connect("127.0.0.1", this.managementPort);
		connect("127.0.0.2", this.port); // the traffic port listens on every address
	}

	@Test
	void prometheusScrapeHasTheDecisionMeters() {
		Gateways.get(this.client, "/api/orders", "demo-free-key");
		this.management.get().uri("/actuator/prometheus").exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.value((body) -> org.assertj.core.api.Assertions.assertThat(body)
				.contains("ratelimit_decisions_total{group=\"api\",outcome=\"allowed\",plan=\"free\",route=\"api\"}"));
	}

	@Test
	void prometheusScrapeHasTheCircuitBreakerMeters() {
		Gateways.get(this.client, "/api/orders", "demo-free-key"); // one check through the breaker
		String scrape = scrape();
		// resilience4j-micrometer is on the sample's class path: the starter binds its breaker's meters
		assertThat(scrape).contains("resilience4j_circuitbreaker_state{name=\"ratelimit-redis\",state=\"closed\"} 1.0",
				"resilience4j_circuitbreaker_state{name=\"ratelimit-redis\",state=\"open\"} 0.0",
				"resilience4j_circuitbreaker_state{name=\"ratelimit-redis\",state=\"half_open\"} 0.0");
		assertThat(value(scrape,
				"resilience4j_circuitbreaker_calls_seconds_count{kind=\"successful\",name=\"ratelimit-redis\"}"))
			.isGreaterThanOrEqualTo(1);
	}

	@Test
	void prometheusScrapeHasEveryMetricTheGrafanaDashboardQueries() throws IOException {
		Gateways.get(this.client, "/api/orders", "demo-free-key");
		Set<String> scraped = scrape().lines()
			.filter((line) -> !line.startsWith("#") && !line.isBlank())
			.map((line) -> line.split("[{ ]")[0])
			.collect(Collectors.toSet());
		List<String> queries = JsonPath.read(Files.readString(dashboard()), "$.panels[*].targets[*].expr");
		Set<String> queried = new TreeSet<>();
		Matcher metric = Pattern.compile("\\b(ratelimit_[a-z_]+|resilience4j_circuitbreaker_[a-z_]+)")
			.matcher(String.join("\n", queries));
		while (metric.find()) {
			queried.add(metric.group(1));
		}
		assertThat(queried).contains("resilience4j_circuitbreaker_state");
		// a counter shows up once it has moved: Redis errors cannot be provoked with Redis up
		scraped.add("ratelimit_redis_errors_total");
		assertThat(scraped).containsAll(queried);
	}

	@Test
	void demoUpstreamAnswersThroughTheGatewayWithTheRateLimitFields() {
		EntityExchangeResult<String> result = Gateways.get(this.client, "/api/orders", "demo-free-key");

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
		assertThat(result.getResponseBody()).isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/api/orders\"}");
		// No group on the 'api' route: the route id is the group; the free plan's two default limits apply.
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-api-1s\";q=20;w=2, \"free-api-1d\";q=10000;w=86400");
		assertThat(result.getResponseHeaders().getFirst("RateLimit"))
			.matches("\"free-api-1s\";r=19;t=\\d+, \"free-api-1d\";r=9999;t=\\d+");
	}

	@Test
	void methodAndPathReachTheUpstreamUnchanged() {
		EntityExchangeResult<String> result = this.client.post()
			.uri("/api/search/x?q=a")
			.header(Gateways.API_KEY_HEADER, "demo-pro-key")
			.bodyValue("{\"q\":\"a\"}")
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
		EntityExchangeResult<String> result = Gateways.get(this.client, "/api/orders", "no-such-key");

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"anonymous-api\";q=60;w=60");
	}

	@Test
	void loginIsLimitedByAddressToFivePerQuarterHourWhateverTheApiKey() {
		for (int i = 1; i <= 5; i++) {
			EntityExchangeResult<String> allowed = Gateways.get(this.client, "/auth/login", "demo-pro-key");
			assertThat(allowed.getStatus()).as("login attempt %d", i).isEqualTo(HttpStatus.OK);
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"anonymous-login\";q=5;w=900");
		}

		EntityExchangeResult<String> denied = Gateways.get(this.client, "/auth/login", "demo-pro-key");

		assertThat(denied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// One token comes back every 3 minutes.
		assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"))).isBetween(170L, 180L);
		List<String> violated = JsonPath.read(denied.getResponseBody(), "$['violated-policies']");
		assertThat(violated).containsExactly("anonymous-login");
	}

	@Test
	void routeListingShowsTheReadableRateLimitFilters() {
		EntityExchangeResult<String> result = Gateways.get(this.management, "/actuator/gateway/routes", null);

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		List<String> searchFilters = JsonPath.read(result.getResponseBody(), "$[?(@.route_id == 'search')].filters[*]");
		assertThat(searchFilters).singleElement()
			.asString()
			.contains("RateLimit group = 'search', keyBy = API_KEY, cost = 1, critical = false");
		List<String> loginFilters = JsonPath.read(result.getResponseBody(), "$[?(@.route_id == 'login')].filters[*]");
		assertThat(loginFilters).singleElement()
			.asString()
			.contains("RateLimit group = 'login', keyBy = IP, cost = 1, critical = true");
		List<String> routeIds = JsonPath.read(result.getResponseBody(), "$[*].route_id");
		assertThat(routeIds).containsExactly("search", "reports", "api", "login", "otp", "public");
	}

	@Test
	void slowReportsHoldOneOfTwoSlotsWhileInFlight() {
		EntityExchangeResult<String> report = Gateways.get(this.client, "/api/reports/monthly", "demo-free-key");
		assertThat(report.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(report.getResponseHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-reports-concurrency\";q=2;qu=\"concurrency\", \"free-reports-1m\";q=30;w=60");
		// the fields are written when the request is admitted: its own slot is taken, one is free
		assertThat(report.getResponseHeaders().getFirst("RateLimit"))
			.matches("\"free-reports-concurrency\";r=1, \"free-reports-1m\";r=\\d+;t=\\d+");
	}

	@Test
	void routeListingIsReadOnly() {
		this.management.post()
			.uri("/actuator/gateway/refresh")
			.exchange()
			.expectStatus()
			.value((status) -> assertThat(status).isNotEqualTo(200));
	}

	@Test
	void startupCheckReachesRedis() {
		assertThat(this.redisStartupCheck.check().block(Duration.ofSeconds(10))).isTrue();
	}

	private String scrape() {
		return this.management.get().uri("/actuator/prometheus").exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

	/** The value of the scrape's line for one series, e.g. {@code name{tag="x"}}; fails if there is none. */
	private static double value(String scrape, String series) {
		return scrape.lines()
			.filter((line) -> line.startsWith(series + " "))
			.map((line) -> Double.parseDouble(line.substring(series.length() + 1).trim()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no " + series + " in the scrape:\n" + scrape));
	}

	/** The Grafana dashboard of the repository ({@code src/grafana}), found from the module's directory up. */
	private static Path dashboard() {
		Path path = Path.of("src/grafana/ratelimit-dashboard.json");
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.exists(dir.resolve(path))) {
				return dir.resolve(path);
			}
		}
		throw new IllegalStateException("dashboard not found: " + path);
	}

	private static void connect(String address, int port) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(address, port), 2000);
		}
	}

}
