package io.github.ratelimit.gateway.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Meters, shadow mode, the denial log line and the Grafana dashboard, through real HTTP into a real gateway with a
 * real Redis (profiles {@code gateway-it} and {@code observability-it}; the same context as
 * {@code RateLimitsEndpointIntegrationTest}).
 */
@ExtendWith(OutputCaptureExtension.class)
@ActiveProfiles({ "gateway-it", "observability-it" })
class RateLimitMetricsRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Autowired
	MeterRegistry meters;

	@Test
	void decisionsAreCountedByRouteGroupPlanAndOutcome() {
		double allowed = decisions("a", "allowed");
		double denied = decisions("a", "denied");
		long checks = checks("redis");
		for (int i = 0; i < 3; i++) {
			get("/a/" + i, "key-one");
		}
		assertThat(decisions("a", "allowed") - allowed).isEqualTo(2);
		assertThat(decisions("a", "denied") - denied).isEqualTo(1);
		assertThat(checks("redis") - checks).isEqualTo(3);
	}

	@Test
	void shadowModeLetsOverLimitTrafficThroughAndCountsIt() {
		double shadowDenied = decisions("shadowed", "shadow-denied");
		for (int i = 0; i < 5; i++) {
			this.client.get().uri("/shadowed/" + i).header("X-API-Key", "key-one").exchange()
				.expectStatus().isOk()
				.expectHeader().doesNotExist("RateLimit");
		}
		assertThat(decisions("shadowed", "shadow-denied") - shadowDenied).isEqualTo(3);
		// the shadow route measured the same buckets as the enforced route of group a
		get("/a/x", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void everyDenialIsLoggedWithAHashedClientAndNeverTheKey(CapturedOutput output) {
		get("/a/1", "key-two");
		get("/a/2", "key-two");
		get("/a/3", "key-two").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		String hash = ApiKeyHasher.hash("key-two");
		assertThat(output.getOut()).contains("Rate limit denied: client=k:" + hash + " route=a group=a plan=free policies=[free-a]")
			.doesNotContain("key-two");
	}

	@Test
	void tagCardinalityStaysBoundedWith10000Clients() {
		get("/load/warm", "load-warm");
		List<String> before = ratelimitMeterIds();
		WebClient web = pooledWebClient();
		Flux.range(0, 10_000)
			.flatMap((i) -> web.get().uri("/load/" + i).header("X-API-Key", "load-" + i)
				.exchangeToMono((r) -> r.releaseBody().thenReturn(r.statusCode().value())), 32)
			.blockLast(Duration.ofSeconds(120));
		// the decisions of 10,000 clients add no series (an outcome or source not seen before would, e.g. a
		// fallback decision after a timeout on an overloaded machine: the list says which)
		assertThat(ratelimitMeterIds()).containsExactlyInAnyOrderElementsOf(before);
		assertThat(ratelimitMeters()).isLessThan(40);
	}

	@Test
	void dashboardRefersOnlyToMetricsThePrometheusScrapeHas() throws IOException {
		get("/a/1", "key-one");
		get("/a/2", "key-one");
		get("/a/3", "key-one");
		String scrape = this.client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
			.expectBody(String.class).returnResult().getResponseBody();
		Set<String> scraped = new HashSet<>();
		scrape.lines().filter((l) -> !l.startsWith("#") && !l.isBlank())
			.forEach((l) -> scraped.add(l.split("[{ ]")[0]));
		assertThat(scraped).contains("ratelimit_decisions_total", "ratelimit_check_duration_seconds_bucket",
				"resilience4j_circuitbreaker_state");

		JsonNode dashboard = JsonMapper.shared().readTree(Files.readString(dashboardPath()));
		assertThat(dashboard.path("title").asString()).isNotBlank();
		Set<String> referenced = new HashSet<>();
		Pattern metric = Pattern.compile("\\b(ratelimit_[a-z_]+|resilience4j_circuitbreaker_[a-z_]+)");
		for (JsonNode panel : dashboard.path("panels")) {
			for (JsonNode target : panel.path("targets")) {
				Matcher m = metric.matcher(target.path("expr").asString());
				while (m.find()) {
					referenced.add(m.group(1));
				}
			}
		}
		assertThat(referenced).isNotEmpty();
		// counters and timers only show up once they have moved; errors of every kind cannot all be provoked here
		Set<String> published = new HashSet<>(scraped);
		published.add("ratelimit_redis_errors_total");
		assertThat(published).containsAll(referenced);
	}

	private static Path dashboardPath() {
		Path path = Path.of("src/grafana/ratelimit-dashboard.json");
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.exists(dir.resolve(path))) {
				return dir.resolve(path);
			}
		}
		throw new IllegalStateException("dashboard not found: " + path);
	}

	private List<String> ratelimitMeterIds() {
		return this.meters.getMeters().stream().map(Meter::getId)
			.filter((id) -> id.getName().startsWith("ratelimit."))
			.map((id) -> id.getName() + id.getTags())
			.toList();
	}

	private int ratelimitMeters() {
		List<Meter> all = this.meters.getMeters();
		return (int) all.stream().filter((m) -> m.getId().getName().startsWith("ratelimit.")).count();
	}

	private double decisions(String route, String outcome) {
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.DECISIONS).tag("route", route)
			.tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private long checks(String source) {
		Timer timer = this.meters.find(MicrometerRateLimitMetrics.CHECKS).tag("source", source).timer();
		return (timer != null) ? timer.count() : 0;
	}
}
