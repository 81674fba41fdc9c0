package io.github.ratelimit.sample.mvc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.sample.support.AbstractSampleGatewayApplicationTest;
import io.github.ratelimit.sample.support.SampleGateways;
import jakarta.servlet.Filter;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Server MVC sample gateway as configured in application.yml, against a real Redis, over real HTTP: besides what
 * both samples answer alike ({@link AbstractSampleGatewayApplicationTest}).
 */
// A generous Redis timeout: these tests check decisions from Redis, also on a loaded machine. One more free-plan
// key, whose search bucket only the burst test uses.
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.redis-timeout=2s",
				"ratelimit.api-keys[" + SampleGatewayMvcApplicationTest.BURST_KEY + "]=free" })
class SampleGatewayMvcApplicationTest extends AbstractSampleGatewayApplicationTest {

	/** A free-plan API key used by {@link #searchBurstIsAdmittedUpToTheCapacityThenRefusedWith429()} only. */
	static final String BURST_KEY = "burst-free-key";

	@Autowired
	private RequestThreads requestThreads;

	@Test
	void searchBurstIsAdmittedUpToTheCapacityThenRefusedWith429() {
		List<EntityExchangeResult<String>> results = new ArrayList<>();
		long start = System.nanoTime();
		EntityExchangeResult<String> result;
		do {
			result = SampleGateways.get(this.client, "/api/search/burst", BURST_KEY);
			results.add(result);
		}
		while (result.getStatus().value() == 200 && results.size() < 20);
		long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);

		// capacity 5, 1 token per second: five admitted at once, more only as tokens come back during the burst
		List<EntityExchangeResult<String>> allowed = results.subList(0, results.size() - 1);
		assertThat(allowed).hasSizeBetween(5, 5 + (int) seconds + 1);
		for (EntityExchangeResult<String> admitted : allowed) {
			assertThat(admitted.getStatus()).isEqualTo(HttpStatus.OK);
			assertThat(admitted.getResponseBody())
				.isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/api/search/burst\"}");
			assertThat(admitted.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-search\";q=5;w=5");
		}
		assertThat(allowed.get(0).getResponseHeaders().getFirst("RateLimit")).matches("\"free-search\";r=4;t=1");

		EntityExchangeResult<String> denied = results.get(results.size() - 1);
		assertThat(denied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1"); // one token back per second
		assertThat(denied.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-search\";q=5;w=5");
		assertThat(denied.getResponseHeaders().getFirst("RateLimit")).matches("\"free-search\";r=0;t=[1-5]");
		assertThat(denied.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		String problem = denied.getResponseBody();
		assertThat(JsonPath.<Integer>read(problem, "$.status")).isEqualTo(429);
		assertThat(JsonPath.<String>read(problem, "$.type")).endsWith("#quota-exceeded");
		assertThat(JsonPath.<String>read(problem, "$.instance")).isEqualTo("/api/search/burst");
		assertThat(JsonPath.<List<String>>read(problem, "$['violated-policies']")).containsExactly("free-search");
	}

	@Test
	void slowReportsAreHeldToTwoInFlightAndGiveTheirSlotsBackWhenAnswered() {
		String inFlight = "/actuator/ratelimits/reports?apiKey=demo-free-key";
		CompletableFuture<EntityExchangeResult<String>> first = CompletableFuture
			.supplyAsync(() -> SampleGateways.get(this.client, "/api/reports/monthly", "demo-free-key"));
		CompletableFuture<EntityExchangeResult<String>> second = CompletableFuture
			.supplyAsync(() -> SampleGateways.get(this.client, "/api/reports/weekly", "demo-free-key"));
		// both wait for the slow upstream (2 s), each holding one of the free plan's two slots
		await().atMost(Duration.ofSeconds(DemoUpstream.SLOW_ANSWER.toSeconds() - 1))
			.until(() -> inFlight(inFlight), (n) -> n == 2);

		EntityExchangeResult<String> third = SampleGateways.get(this.client, "/api/reports/daily", "demo-free-key");

		assertThat(third.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(third.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(JsonPath.<List<String>>read(third.getResponseBody(), "$['violated-policies']"))
			.containsExactly("free-reports-concurrency");
		for (EntityExchangeResult<String> report : List.of(first.join(), second.join())) {
			assertThat(report.getStatus()).isEqualTo(HttpStatus.OK);
			assertThat(report.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"free-reports-concurrency\";q=2;qu=\"concurrency\", \"free-reports-1m\";q=30;w=60");
		}
		// once their responses are written the slots are free again, without waiting for max-request-duration
		await().atMost(Duration.ofSeconds(5)).until(() -> inFlight(inFlight), (n) -> n == 0);
	}

	@Test
	void actuatorIsNotServedOnTheTrafficPort() {
		assertThat(this.managementPort).isNotEqualTo(this.port);
		for (String path : List.of("/actuator/ratelimits", "/actuator/health", "/actuator/prometheus", "/actuator")) {
			this.client.get().uri(path).exchange().expectStatus().isNotFound();
			this.management.get().uri(path).exchange().expectStatus().isOk();
		}
	}

	@Test
	void prometheusScrapeHasTheDecisionAndCircuitBreakerMeters() {
		SampleGateways.get(this.client, "/public/meters", null);
		String scrape = this.management.get().uri("/actuator/prometheus").exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(scrape).contains(
				"ratelimit_decisions_total{group=\"public\",outcome=\"allowed\",plan=\"anonymous\",route=\"public\"}",
				"resilience4j_circuitbreaker_state{name=\"ratelimit-redis\",state=\"closed\"} 1.0");
	}

	@Test
	void requestsRunOnVirtualThreadsWhereTheJvmHasThem() {
		assertThat(SampleGateways.get(this.client, "/public/threads", null).getStatus()).isEqualTo(HttpStatus.OK);
		Thread served = this.requestThreads.last.get();
		assertThat(served).isNotNull();
		// spring.threads.virtual.enabled: true in application.yml; Spring Boot applies it on Java 21 or newer
		assertThat(RequestThreads.isVirtual(served)).as("request served on %s", served)
			.isEqualTo(Runtime.version().feature() >= 21);
	}

	private int inFlight(String lookup) {
		String body = this.management.get().uri(lookup).exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		// '..': the buckets are at the top, or (servlet actuator, see the disabled test above) under "body"
		List<Integer> inFlight = JsonPath.read(body, "$..buckets[?(@.policy == 'free-reports-concurrency')].inFlight");
		assertThat(inFlight).as("the concurrency limit in %s", body).hasSize(1);
		return inFlight.get(0);
	}

	/** Remembers the thread that served the latest request on the traffic port. */
	@TestConfiguration(proxyBeanMethods = false)
	static class RequestThreads {

		final AtomicReference<Thread> last = new AtomicReference<>();

		@Bean
		Filter requestThreadRecorder() {
			return (request, response, chain) -> {
				this.last.set(Thread.currentThread());
				chain.doFilter(request, response);
			};
		}

		/** {@code Thread.isVirtual()} (Java 21+), read reflectively: this module compiles for Java 17. */
		static boolean isVirtual(Thread thread) {
			try {
				return (boolean) Thread.class.getMethod("isVirtual").invoke(thread);
			}
			catch (NoSuchMethodException ex) {
				return false;
			}
			catch (ReflectiveOperationException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
