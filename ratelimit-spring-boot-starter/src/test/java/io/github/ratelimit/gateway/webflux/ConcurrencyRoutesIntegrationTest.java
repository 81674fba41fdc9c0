package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.actuate.RateLimitsEndpoint;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.test.OpenRequests;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Concurrency limits ({@code type: concurrency}, profile {@code concurrency-it}) through real gateways: this test's
 * and a second instance started beside it, slots in the real test Redis, and a real upstream that holds requests
 * until the test lets them go ({@link HeldUpstream}). Each test uses an API key of its own (plan free).
 */
@ActiveProfiles("concurrency-it")
class ConcurrencyRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final HeldUpstream held = new HeldUpstream();

	/**
	 * The upstream of the routes whose requests the tests cut off (hang-ups, gateway timeouts): apart, so that the
	 * connections the gateway closes there and the work left there touch no other test's upstream.
	 */
	private static final HeldUpstream cutOff = new HeldUpstream();

	private static ConfigurableApplicationContext second;

	@Autowired
	private RateLimitsEndpoint endpoint;

	@DynamicPropertySource
	static void heldUpstream(DynamicPropertyRegistry registry) {
		registry.add("held-upstream.uri", held::uri);
		registry.add("cut-off-upstream.uri", cutOff::uri);
	}

	@BeforeAll
	static void startSecondInstance() {
		second = startInstance();
	}

	@AfterAll
	static void stopSecondInstance() {
		if (second != null) {
			second.close();
		}
		held.close();
		cutOff.close();
	}

	@BeforeEach
	void countAfresh() {
		held.resetMost();
		cutOff.resetMost();
	}

	@AfterEach
	void letEveryRequestGo() {
		held.releaseAll();
		cutOff.releaseAll();
	}

	@Test
	void threeInFlightAcrossTwoInstancesTheOthersGet429AndAFinishedOneFreesItsSlot() {
		String key = newKey();
		List<CompletableFuture<ResponseEntity<String>>> answers = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			answers.add(get((i % 2 == 0) ? this.port : port(second), "/reports/hold/" + i, key));
		}
		await().atMost(Duration.ofSeconds(30)).until(() -> done(answers).size() == 7);
		assertThat(done(answers)).allSatisfy((denied) -> {
			assertThat(denied.getStatusCode().value()).isEqualTo(429);
			assertThat(denied.getHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"free-reports\";q=3;qu=\"concurrency\"");
			assertThat(denied.getHeaders().getFirst("RateLimit")).isEqualTo("\"free-reports\";r=0");
			// no slot was ever given back for this key: no hold time measured, 1 s
			assertThat(denied.getHeaders().getFirst("Retry-After")).isEqualTo("1");
			assertThat(denied.getBody())
				.contains("Too many requests in flight for free-reports (at most 3 at once); retry after about 1 s.")
				.contains("\"violated-policies\":[\"free-reports\"]");
		});
		// the three admitted reach the upstream (a slot is taken before its request is forwarded)
		await().atMost(Duration.ofSeconds(10)).until(() -> held.inFlight() == 3);
		assertThat(held.mostInFlight()).isEqualTo(3);
		assertThat(inFlightGauge(this.meters) + inFlightGauge(second.getBean(MeterRegistry.class))).isEqualTo(3);
		assertThat(slotsTaken("reports")).isEqualTo(3);

		// one finishes: its client gets 200, and the next request gets its slot
		held.releaseOne();
		await().atMost(Duration.ofSeconds(10)).until(() -> done(answers).size() == 8);
		assertThat(done(answers).stream().filter((a) -> a.getStatusCode().value() == 200)).hasSize(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 2);
		CompletableFuture<ResponseEntity<String>> next = get(port(second), "/reports/hold/next", key);
		await().atMost(Duration.ofSeconds(10)).until(() -> held.inFlight() == 3);
		assertThat(next).isNotDone();
		assertThat(held.mostInFlight()).isEqualTo(3);

		held.releaseAll();
		await().atMost(Duration.ofSeconds(10)).until(() -> next.isDone() && done(answers).size() == 10);
		assertThat(next.join().getStatusCode().value()).isEqualTo(200);
		assertThat(done(answers).stream().filter((a) -> a.getStatusCode().value() == 200)).hasSize(3);
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 0);
		assertThat(inFlightGauge(this.meters) + inFlightGauge(second.getBean(MeterRegistry.class))).isZero();
		assertThat(concurrencyDenials(this.meters) + concurrencyDenials(second.getBean(MeterRegistry.class)))
			.isEqualTo(7);
	}

	@Test
	void theSlotComesBackOnAnUpstreamErrorAndWhenTheUpstreamCannotBeReached() {
		String key = newKey();
		ResponseEntity<String> failed = get(this.port, "/reports/error/x", key).join();
		assertThat(failed.getStatusCode().value()).isEqualTo(500);
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 0);

		// connection refused: the request never reached an upstream
		for (int i = 0; i < 4; i++) {
			int status = get(this.port, "/unreachable/x", key).join().getStatusCode().value();
			assertThat(status).isGreaterThanOrEqualTo(500);
			await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 0);
		}
	}

	@Test
	void aTimedOutRequestKeepsItsSlotWhileTheUpstreamMayStillWork() {
		String key = newKey();
		// the route's response timeout (300 ms): the gateway answers 504, the upstream still works on the request
		ResponseEntity<String> timedOut = get(this.port, "/slow-reports/x", key).join();
		assertThat(timedOut.getStatusCode().value()).isEqualTo(504);
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlightGauge(this.meters) == 0);
		assertThat(cutOff.inFlight()).isEqualTo(1);
		assertThat(slotsTaken("reports")).isEqualTo(1);
	}

	/**
	 * The attack of issue 27: a client sends as many requests as its limit allows over two instances, hangs up, and
	 * does it again while the upstream still works on the first ones. The upstream counts a request as in flight
	 * until its work ends, whether or not the gateway is still connected.
	 */
	@Test
	void aClientHangingUpAgainAndAgainNeverHasMoreThanItsLimitAtTheUpstream() throws IOException {
		String key = newKey();
		int before = cutOff.received();
		List<String> denied = new ArrayList<>();
		for (int round = 0; round < 4; round++) {
			int receivedBefore = cutOff.received();
			List<Socket> sockets = new ArrayList<>();
			try {
				for (int i = 0; i < 3; i++) {
					int port = (i % 2 == 0) ? this.port : port(second);
					sockets.add(OpenRequests.sendGet(port, "/kept/hold/" + round + "-" + i, key));
				}
				// each request either reached the upstream or was answered at the gateway
				await().atMost(Duration.ofSeconds(10))
					.until(() -> cutOff.received() - receivedBefore + OpenRequests.answered(sockets).size() == 3);
				for (Socket socket : OpenRequests.answered(sockets)) {
					denied.add(readUntil(socket.getInputStream(), "\r\n\r\n"));
				}
			}
			finally {
				for (Socket socket : sockets) {
					socket.close(); // the client hangs up
				}
			}
			// both gateways saw every exchange of the round end
			await().atMost(Duration.ofSeconds(10)).until(() -> keptInFlightOnBothInstances() == 0);
		}
		assertThat(cutOff.mostInFlight()).as("most requests of the client the upstream worked on at once")
			.isLessThanOrEqualTo(3);
		assertThat(cutOff.received() - before).isEqualTo(3);
		assertThat(cutOff.inFlight()).as("still working after the client left").isEqualTo(3);
		assertThat(denied).hasSize(9)
			.allSatisfy((answer) -> assertThat(answer).startsWith("HTTP/1.1 429")
				.containsIgnoringCase("Retry-After: "));
		assertThat(slotsTaken("kept")).isEqualTo(3);
		// the upstream finishes; the slots free themselves at max-request-duration (5 s after they were taken)
		cutOff.releaseAll();
		awaitAdmittedAgain(key);
	}

	@Test
	void gatewayTimeoutsAgainAndAgainNeverLeaveMoreThanTheLimitAtTheUpstream() {
		String key = newKey();
		int before = cutOff.received();
		List<Integer> statuses = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			List<CompletableFuture<ResponseEntity<String>>> answers = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				answers.add(get((i % 2 == 0) ? this.port : port(second), "/kept-timeout/hold/" + round + "-" + i, key));
			}
			answers.forEach((answer) -> statuses.add(answer.join().getStatusCode().value()));
			await().atMost(Duration.ofSeconds(10)).until(() -> keptInFlightOnBothInstances() == 0);
		}
		assertThat(cutOff.mostInFlight()).as("most requests of the client the upstream worked on at once")
			.isLessThanOrEqualTo(3);
		assertThat(cutOff.received() - before).isEqualTo(3);
		assertThat(cutOff.inFlight()).as("still working after the gateway gave up").isEqualTo(3);
		// the first three time out (504) while the upstream keeps them; later ones are refused until they expire
		assertThat(statuses).containsExactly(504, 504, 504, 429, 429, 429, 429, 429, 429);
		cutOff.releaseAll();
		awaitAdmittedAgain(key);
	}

	@Test
	void retriesAfterATimeoutNeverLeaveMoreThanTheLimitAtTheUpstream() {
		String key = newKey();
		int before = cutOff.received();
		// Retry before RateLimit (3 retries of a 300 ms response timeout): each attempt that timed out keeps its slot,
		// so the upstream never works on more than 3 of the client's requests, however many attempts are made
		List<CompletableFuture<ResponseEntity<String>>> answers = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			answers.add(get(this.port, "/retried-timeout/hold/" + i, key));
		}
		List<Integer> statuses = answers.stream().map((answer) -> answer.join().getStatusCode().value()).toList();
		assertThat(cutOff.mostInFlight()).as("most requests of the client the upstream worked on at once")
			.isLessThanOrEqualTo(3);
		assertThat(cutOff.received() - before).as("attempts that reached the upstream").isEqualTo(3);
		assertThat(statuses).as("each timed out, and its retry was refused: the three kept their slots")
			.containsExactly(429, 429, 429);
		cutOff.releaseAll();
		awaitAdmittedAgain(key);
	}

	/** The requests holding slots of group {@code kept} now, on this instance and the second one. */
	private double keptInFlightOnBothInstances() {
		return inFlightGauge(this.meters, "kept") + inFlightGauge(second.getBean(MeterRegistry.class), "kept");
	}

	/** The kept slots free themselves at max-request-duration: the client is admitted again. */
	private void awaitAdmittedAgain(String key) {
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(250))
			.until(() -> get(this.port, "/kept/error/x", key).join().getStatusCode().value() == 500);
	}

	@Test
	void aGatewayShuttingDownGivesItsSlotsBack() {
		String key = newKey();
		// not waiting for the request to end (graceful shutdown would, up to 30 s): it is still in flight when the
		// instance stops
		ConfigurableApplicationContext third = startInstance("--server.shutdown=immediate");
		CompletableFuture<ResponseEntity<String>> inFlight;
		try {
			inFlight = get(port(third), "/reports/hold/x", key);
			await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 1 && held.inFlight() == 1);
		}
		finally {
			third.close();
		}
		// given back on shutdown, not 30 s (max-request-duration) later
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 0);
		held.releaseAll();
		await().atMost(Duration.ofSeconds(10)).until(inFlight::isDone);
	}

	@Test
	void theSlotsOfAKilledInstanceAreFreeAgainAfterMaxRequestDurationAndNotBefore() throws Exception {
		String key = newKey();
		try (GatewayProcess child = GatewayProcess.start(held.uri())) {
			get(child.port(), "/short/hold/a", key);
			get(child.port(), "/short/hold/b", key);
			await().atMost(Duration.ofSeconds(20)).until(() -> slotsTaken("short") == 2);
			child.kill();
		}
		String slots = redis.command("ZRANGE", slotKey("short"), "0", "0", "WITHSCORES");
		long oldest = Long.parseLong(slots.split("\n")[1]);
		long freeFrom = oldest + Duration.ofSeconds(4).toNanos() / 1000;
		// Redis time after each answer: a 200 before freeFrom would be a slot freed early
		List<String> seen = new ArrayList<>();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
			int status = get(this.port, "/short/error/x", key).join().getStatusCode().value();
			long after = redisTimeMicros();
			seen.add(status + "@" + (after - oldest) / 1000 + "ms");
			if (status == 500) { // admitted (the upstream answers 500 at once)
				assertThat(after).as("admitted again at %s", seen).isGreaterThanOrEqualTo(freeFrom);
				return true;
			}
			assertThat(status).isEqualTo(429);
			return false;
		});
		assertThat(seen.get(0)).as("denied right after the kill: %s", seen).startsWith("429@");
	}

	@Test
	void aRequestDeniedByEitherKindOfLimitTakesNothingFromTheOther() {
		String key = newKey();
		List<CompletableFuture<ResponseEntity<String>>> holding = List.of(get(this.port, "/mixed/hold/a", key),
				get(this.port, "/mixed/hold/b", key));
		// both reach the upstream before it lets them go (a slot is taken before its request is forwarded)
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("mixed") == 2 && held.inFlight() == 2);
		ResponseEntity<String> bySlots = get(this.port, "/mixed/error/x", key).join();
		assertThat(bySlots.getStatusCode().value()).isEqualTo(429);
		// two tokens of five taken by the two in flight; the denied third took none
		assertThat(bySlots.getHeaders().getFirst("RateLimit"))
			.matches("\"free-mixed-1h\";r=3;t=\\d+, \"free-mixed-concurrency\";r=0");
		held.releaseAll();
		await().atMost(Duration.ofSeconds(10)).until(() -> done(holding).size() == 2 && slotsTaken("mixed") == 0);
		for (int i = 0; i < 3; i++) {
			assertThat(get(this.port, "/mixed/error/" + i, key).join().getStatusCode().value()).isEqualTo(500);
		}
		ResponseEntity<String> byRate = get(this.port, "/mixed/error/x", key).join();
		assertThat(byRate.getStatusCode().value()).isEqualTo(429);
		assertThat(byRate.getHeaders().getFirst("RateLimit"))
			.matches("\"free-mixed-1h\";r=0;t=\\d+, \"free-mixed-concurrency\";r=2");
		assertThat(slotsTaken("mixed")).isZero();
	}

	@Test
	void aRetryDoesNotCountAgainstItsOwnEarlierAttempt() {
		String key = newKey();
		int before = held.received();
		// max 1 in flight; the upstream answers 500, so Retry runs RateLimit a second time in the same exchange
		ResponseEntity<String> answer = get(this.port, "/retried/error/x", key).join();
		assertThat(answer.getStatusCode().value()).as("the retry's own answer, not a 429").isEqualTo(500);
		assertThat(held.received() - before).as("both attempts reached the upstream").isEqualTo(2);
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("single") == 0);
	}

	@Test
	void theEndpointShowsAClientsRequestsInFlight() {
		String key = newKey();
		CompletableFuture<ResponseEntity<String>> inFlight = get(port(second), "/reports/hold/x", key);
		await().atMost(Duration.ofSeconds(10)).until(() -> slotsTaken("reports") == 1 && held.inFlight() == 1);
		WebEndpointResponse<Map<String, Object>> answer = this.endpoint.buckets(OPERATOR, "reports", key, null);
		assertThat(answer.getStatus()).isEqualTo(200);
		assertThat(answer.getBody().get("buckets")).asList()
			.singleElement()
			.isEqualTo(Map.of("policy", "free-reports", "type", "concurrency", "scope", "client", "maxInFlight", 3L,
					"maxRequestDuration", "PT30S", "inFlight", 1L, "freeSlots", 2L));
		held.releaseAll();
		await().atMost(Duration.ofSeconds(10)).until(inFlight::isDone);
	}

	/** An operator as the endpoint sees one (authenticated, holding any role asked for). */
	private static final SecurityContext OPERATOR = new SecurityContext() {
		@Override
		public java.security.Principal getPrincipal() {
			return () -> "operator";
		}

		@Override
		public boolean isUserInRole(String role) {
			return true;
		}
	};

	private static String newKey() {
		return "load-cc-" + UUID.randomUUID();
	}

	/** Slots taken now in the group's concurrency limit (the test's only client there: Redis is flushed per test). */
	private static long slotsTaken(String group) {
		String key = slotKey(group);
		return (key == null) ? 0 : Long.parseLong(redis.command("ZCARD", key));
	}

	private static String slotKey(String group) {
		String keys = redis.command("KEYS", "rl:{" + group + "|*:cc");
		return keys.isEmpty() ? null : keys.split("\n")[0];
	}

	private static long redisTimeMicros() {
		String[] time = redis.command("TIME").split("\n");
		return Long.parseLong(time[0]) * 1_000_000 + Long.parseLong(time[1]);
	}

	private static double inFlightGauge(MeterRegistry registry) {
		return inFlightGauge(registry, "reports");
	}

	private static double inFlightGauge(MeterRegistry registry, String group) {
		var gauge = registry.find(MicrometerRateLimitMetrics.IN_FLIGHT).tag("group", group).gauge();
		return (gauge != null) ? gauge.value() : 0;
	}

	private static double concurrencyDenials(MeterRegistry registry) {
		return registry.find(MicrometerRateLimitMetrics.DENIALS)
			.tag("group", "reports")
			.tag("kind", "concurrency")
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	/** The answers that have come in full, in order. */
	static List<ResponseEntity<String>> done(List<CompletableFuture<ResponseEntity<String>>> answers) {
		return answers.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join).toList();
	}

	/** A GET with the API key, its own connection, any status; completes when the whole response is in. */
	static CompletableFuture<ResponseEntity<String>> get(int port, String path, String key) {
		WebClient client = WebClient.builder()
			.clientConnector(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())
				.responseTimeout(Duration.ofSeconds(30))))
			.baseUrl("http://127.0.0.1:" + port)
			.build();
		return client.get()
			.uri(path)
			.header("X-API-Key", key)
			.exchangeToMono((response) -> response.toEntity(String.class))
			.toFuture();
	}

	private static String readUntil(InputStream in, String marker) throws IOException {
		StringBuilder text = new StringBuilder();
		int b;
		while (text.indexOf(marker) < 0 && (b = in.read()) >= 0) {
			text.append((char) b);
		}
		return text.toString();
	}

	private static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port"));
	}

	/** One more gateway of this profile in this JVM, on event loops of its own (closing it leaves the others'). */
	private static ConfigurableApplicationContext startInstance(String... more) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
				"--held-upstream.uri=" + held.uri(), "--cut-off-upstream.uri=" + cutOff.uri()));
		args.addAll(List.of(more));
		return new SpringApplicationBuilder(GatewayTestApplication.class).profiles("concurrency-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(ReactorResourceFactory.class, ConcurrencyRoutesIntegrationTest::ownEventLoops))
			.run(args.toArray(String[]::new));
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	/**
	 * A gateway of this profile in a JVM of its own ({@link ConcurrencyGatewayMain}), so that it can be killed with
	 * SIGKILL: its slots are never given back.
	 */
	private static final class GatewayProcess implements AutoCloseable {

		private final Process process;

		private final int port;

		private GatewayProcess(Process process, int port) {
			this.process = process;
			this.port = port;
		}

		static GatewayProcess start(String upstreamUri) throws IOException {
			int port;
			try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
				port = free.getLocalPort();
			}
			Path log = Path.of("target", "concurrency-killed-instance.log");
			Files.createDirectories(log.getParent());
			String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
			Process process = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp",
					System.getProperty("java.class.path"), ConcurrencyGatewayMain.class.getName(),
					"--server.port=" + port, "--server.address=127.0.0.1", "--spring.main.banner-mode=off",
					"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
					"--held-upstream.uri=" + upstreamUri, "--cut-off-upstream.uri=" + cutOff.uri())
				.redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			GatewayProcess child = new GatewayProcess(process, port);
			try {
				await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
					assertThat(process.isAlive()).as("the child gateway exited; see %s", log.toAbsolutePath()).isTrue();
					try (Socket probe = new Socket(InetAddress.getByName("127.0.0.1"), port)) {
						return true;
					}
					catch (IOException ex) {
						return false;
					}
				});
			}
			catch (RuntimeException | Error ex) {
				child.close();
				throw ex;
			}
			return child;
		}

		int port() {
			return this.port;
		}

		/** SIGKILL: no shutdown hook, no slot given back. */
		void kill() throws InterruptedException {
			this.process.destroyForcibly();
			assertThat(this.process.waitFor(20, TimeUnit.SECONDS)).as("the child gateway died").isTrue();
		}

		@Override
		public void close() {
			this.process.destroyForcibly();
		}

	}

}
