package io.github.ratelimit.sample.mvc;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import jakarta.servlet.Filter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The Server MVC sample gateway as configured in application.yml, against a real Redis, over real HTTP. */
@ExtendWith(RedisExtension.class)
// A generous Redis timeout: these tests check decisions from Redis, also on a loaded machine. One more free-plan
// key, whose search bucket only the burst test uses.
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.redis-timeout=2s",
				"ratelimit.api-keys[" + SampleGatewayMvcApplicationTest.BURST_KEY + "]=free" })
class SampleGatewayMvcApplicationTest {

	/** A free-plan API key used by {@link #searchBurstIsAdmittedUpToTheCapacityThenRefusedWith429()} only. */
	static final String BURST_KEY = "burst-free-key";

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

	@Autowired
	private RequestThreads requestThreads;

	private RestTestClient client;

	/** The actuator's own port (management.server.port): the only place the actuator answers. */
	private RestTestClient management;

	@BeforeEach
	void client() {
		this.client = Gateways.client(this.port);
		this.management = Gateways.client(this.managementPort);
	}

	@Test
	void searchBurstIsAdmittedUpToTheCapacityThenRefusedWith429() {
		List<EntityExchangeResult<String>> results = new ArrayList<>();
		long start = System.nanoTime();
		EntityExchangeResult<String> result;
		do {
			result = Gateways.get(this.client, "/api/search/burst", BURST_KEY);
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
	void demoUpstreamAnswersThroughTheGatewayWithTheRateLimitFields() {
		EntityExchangeResult<String> result = Gateways.get(this.client, "/api/orders", "demo-free-key");

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
		assertThat(result.getResponseBody()).isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/api/orders\"}");
		// 'RateLimit' without arguments on the 'api' route: the route id is the group; the free plan's defaults apply.
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-api-1s\";q=20;w=2, \"free-api-1d\";q=10000;w=86400");
		assertThat(result.getResponseHeaders().getFirst("RateLimit"))
			.matches("\"free-api-1s\";r=19;t=\\d+, \"free-api-1d\";r=9999;t=\\d+");
	}

	@Test
	void methodBodyAndPathReachTheUpstreamUnchanged() {
		EntityExchangeResult<String> result = this.client.post()
			.uri("/api/search/x?q=a")
			.header(Gateways.API_KEY_HEADER, "demo-pro-key")
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
		EntityExchangeResult<String> result = Gateways.get(this.client, "/api/orders", "no-such-key");

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"anonymous-api\";q=60;w=60");
	}

	/** The login route is the one built with the Java DSL (LoginRouteConfiguration). */
	@Test
	void javaDslLoginRouteIsLimitedByAddressToFivePerQuarterHourWhateverTheApiKey() {
		for (int i = 1; i <= 5; i++) {
			EntityExchangeResult<String> allowed = Gateways.get(this.client, "/auth/login", "demo-pro-key");
			assertThat(allowed.getStatus()).as("login attempt %d", i).isEqualTo(HttpStatus.OK);
			assertThat(allowed.getResponseBody()).contains("\"path\":\"/auth/login\"");
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"anonymous-login\";q=5;w=900");
		}

		EntityExchangeResult<String> denied = Gateways.get(this.client, "/auth/login", "demo-pro-key");

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

	@Test
	void slowReportsAreHeldToTwoInFlightAndGiveTheirSlotsBackWhenAnswered() {
		String inFlight = "/actuator/ratelimits/reports?apiKey=demo-free-key";
		CompletableFuture<EntityExchangeResult<String>> first = CompletableFuture
			.supplyAsync(() -> Gateways.get(this.client, "/api/reports/monthly", "demo-free-key"));
		CompletableFuture<EntityExchangeResult<String>> second = CompletableFuture
			.supplyAsync(() -> Gateways.get(this.client, "/api/reports/weekly", "demo-free-key"));
		// both wait for the slow upstream (2 s), each holding one of the free plan's two slots
		await().atMost(Duration.ofSeconds(DemoUpstream.SLOW_ANSWER.toSeconds() - 1))
			.until(() -> inFlight(inFlight), (n) -> n == 2);

		EntityExchangeResult<String> third = Gateways.get(this.client, "/api/reports/daily", "demo-free-key");

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
	void ratelimitsEndpointListsTheRoutesOnTheManagementPort() {
		Gateways.get(this.client, "/api/search/x", "demo-free-key");
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
		Gateways.get(this.client, "/api/search/x", "demo-free-key");
		// show-clients: always on the management port (the operator boundary): lookups get the real answers
		this.management.get().uri("/actuator/ratelimits/search?apiKey=demo-free-key").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.buckets[0].policy").isEqualTo("free-search");
		this.management.get().uri("/actuator/ratelimits/search?apiKey=never-issued").exchange()
			.expectStatus().isNotFound();
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
	void managementPortListensOnLoopbackOnly() throws IOException {
		// 127.0.0.2 is this host too (Linux loopback), but not the address the management port is bound to
		assertThatThrownBy(() -> connect("127.0.0.2", this.managementPort)).isInstanceOf(ConnectException.class);
		connect("127.0.0.1", this.managementPort);
		connect("127.0.0.2", this.port); // the traffic port listens on every address
	}

	@Test
	void prometheusScrapeHasTheDecisionAndCircuitBreakerMeters() {
		Gateways.get(this.client, "/public/meters", null);
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

	@Test
	void requestsRunOnVirtualThreadsWhereTheJvmHasThem() {
		assertThat(Gateways.get(this.client, "/public/threads", null).getStatus()).isEqualTo(HttpStatus.OK);
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

	private static void connect(String address, int port) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(address, port), 2000);
		}
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
