package io.github.ratelimit.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.sample.support.AbstractSampleGatewayApplicationTest;
import io.github.ratelimit.sample.support.SampleGateways;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample gateway as configured in application.yml, against a real Redis, over real HTTP: besides what both
 * samples answer alike ({@link AbstractSampleGatewayApplicationTest}).
 */
// A generous Redis timeout: these tests check decisions from Redis, also on a loaded machine
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "ratelimit.redis-timeout=2s")
class SampleGatewayApplicationTest extends AbstractSampleGatewayApplicationTest {

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
	void prometheusScrapeHasTheDecisionMeters() {
		SampleGateways.get(this.client, "/api/orders", "demo-free-key");
		this.management.get().uri("/actuator/prometheus").exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.value((body) -> org.assertj.core.api.Assertions.assertThat(body)
				.contains("ratelimit_decisions_total{group=\"api\",outcome=\"allowed\",plan=\"free\",route=\"api\"}"));
	}

	@Test
	void prometheusScrapeHasTheCircuitBreakerMeters() {
		SampleGateways.get(this.client, "/api/orders", "demo-free-key"); // one check through the breaker
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
		SampleGateways.get(this.client, "/api/orders", "demo-free-key");
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
	void routeListingShowsTheReadableRateLimitFilters() {
		EntityExchangeResult<String> result = SampleGateways.get(this.management, "/actuator/gateway/routes", null);

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
		assertThat(routeIds).containsExactly("search", "reports", "chat", "api", "login", "otp", "public");
	}

	@Test
	void slowReportsHoldOneOfTwoSlotsWhileInFlight() {
		EntityExchangeResult<String> report = SampleGateways.get(this.client, "/api/reports/monthly", "demo-free-key");
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

}
