package io.github.ratelimit.frontends;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.frontends.FrontEnd.Gateway;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.test.OpenRequests;
import io.github.ratelimit.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The rules of an upstream protection ({@code src/docs/reference/upstream-protection.md}) through a real gateway of
 * each front end ({@link FrontEnd}, profile {@code protection}: {@code application-protection.yml}) in front of a real
 * slow upstream ({@link HeldUpstream}) whose answers the test holds, so that the requests in flight are what the test
 * decides, not what timing makes them. The protection {@code backend} is fixed: 10 requests in flight, of which high
 * is guaranteed 5, normal 3 and low 2; a client's plan gives its priority ({@code gold-key} high,
 * {@code standard-key} normal, {@code bulk-key} and {@code metered-key} low), the {@code checkout} route makes every
 * request critical. A request is admitted when the upstream receives it, shed when it is answered without.
 *
 * <p>The gateways' Redis is a redis-server of this class's own, killed for the rule that holds while Redis is down.
 * After each test every held answer is released and the protections are empty again.
 */
@ExtendWith(OutputCaptureExtension.class)
class FrontEndsProtectionIntegrationTest {

	private static final int LIMIT = 10;

	private static final RedisServer redis = RedisServer.start();

	private static final HeldUpstream upstream = new HeldUpstream();

	private static final Map<FrontEnd, Gateway> gateways = new EnumMap<>(FrontEnd.class);

	private static final Map<FrontEnd, Queue<Sample>> samples = new EnumMap<>(FrontEnd.class);

	private static final AtomicLong ids = new AtomicLong();

	private static final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	private final List<Sent> sent = new ArrayList<>();

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void aPriorityWithinItsShareIsAdmittedWhereOneBeyondItsShareIsShed(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		admit(gateway, "/protected/s", "bulk-key", 7);
		admit(gateway, "/protected/s", "gold-key", 3); // the limit is full: low holds 5 places beyond its 2
		assertShed(send(gateway, "/protected/s", "bulk-key"), Priority.LOW);
		assertThat(admitted(send(gateway, "/protected/s", "gold-key"))).as("high within its share of 5").isTrue();
		assertThat(backend(gateway).inFlight(Priority.HIGH)).isEqualTo(4);
		assertThat(backend(gateway).inFlight(Priority.LOW)).isEqualTo(7);
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void anIdleShareIsBorrowedSoNothingIsRefusedWhileThereIsRoom(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		int shed = sheds(gateway).count("backend", Priority.LOW, false);
		admit(gateway, "/protected/b", "bulk-key", LIMIT); // low alone, guaranteed 2, takes all 10
		assertThat(sheds(gateway).count("backend", Priority.LOW, false)).isEqualTo(shed);
		assertShed(send(gateway, "/protected/b", "bulk-key"), Priority.LOW);
		assertThat(sheds(gateway).count("backend", Priority.LOW, false)).isEqualTo(shed + 1);
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void theLowestPriorityBeyondItsShareIsShedFirstAndCriticalOnlyWhenCriticalAloneFillsTheLimit(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		admit(gateway, "/protected/o", "bulk-key", 4); // low: 2 within its share, 2 borrowed
		admit(gateway, "/protected/o", "standard-key", 6); // normal: 3 within, 3 borrowed; the limit is full
		assertShed(send(gateway, "/protected/o", "bulk-key"), Priority.LOW);
		// normal's borrowed places rank above low's: admitted until within shares and they fill the limit (5 + 5)
		admit(gateway, "/protected/o", "standard-key", 2);
		assertShed(send(gateway, "/protected/o", "standard-key"), Priority.NORMAL);
		assertThat(admitted(send(gateway, "/protected/o", "gold-key"))).as("high within its share").isTrue();
		releaseAll();
		admit(gateway, "/protected/o", "bulk-key", LIMIT); // the limit full of low
		admit(gateway, "/checkout/o", "bulk-key", LIMIT); // critical: admitted until critical alone fills it
		assertShed(send(gateway, "/checkout/o", "bulk-key"), Priority.CRITICAL);
		assertShed(send(gateway, "/protected/o", "gold-key"), Priority.HIGH);
		assertThat(backend(gateway).inFlight(Priority.CRITICAL)).isEqualTo(LIMIT);
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void aShedRequestGets503WithAProblemBodyAndRetryAfter(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		admit(gateway, "/protected/p", "bulk-key", LIMIT);
		HttpResponse<String> shed = assertShed(send(gateway, "/protected/p", "bulk-key"), Priority.LOW);
		assertThat(shed.headers().firstValue("Retry-After")).contains("2"); // the protection's retry-after
		assertThat(shed.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(shed.headers().firstValue("RateLimit")).as("no limit was checked").isEmpty();
		assertThat(shed.body()).isEqualTo("{\"type\":\"" + RateLimitProblems.OVERLOADED
				+ "\",\"title\":\"Upstream overloaded\",\"status\":503,"
				+ "\"detail\":\"The upstream is overloaded and requests of priority low are shed; retry after 2 s.\","
				+ "\"instance\":\"/protected/p\",\"priority\":\"low\"}");
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void aShedRequestTakesNothingFromTheClientsLimits(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		awaitRedisDecides(gateway);
		redis.flushAll();
		OverLimitCache cache = gateway.context().getBean(DefaultLimiterChain.class).overLimitCache();
		if (cache != null) {
			cache.clear();
		}
		admit(gateway, "/protected/t", "bulk-key", 2); // low's share of 2, taken
		admit(gateway, "/protected/t", "gold-key", LIMIT - 2); // high: 5 within its share, 3 borrowed; full
		for (int i = 0; i < 5; i++) { // low (plan metered: 3 requests an hour) beyond its share: shed
			assertShed(send(gateway, "/protected/t", "metered-key"), Priority.LOW);
		}
		releaseAll();
		for (int remaining = 2; remaining >= 0; remaining--) { // the plan's 3 requests, all still there
			HttpResponse<String> admitted = get(gateway, "/protected/t", "metered-key");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit")).get().asString().contains(";r=" + remaining + ";");
		}
		assertThat(get(gateway, "/protected/t", "metered-key").statusCode()).isEqualTo(429);
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void inShadowModeNothingIsShedButWhatWouldBeIsCounted(FrontEnd frontEnd, CapturedOutput output) {
		Gateway gateway = gateway(frontEnd);
		int wouldBe = sheds(gateway).count("shadowed", Priority.LOW, true);
		admit(gateway, "/shadowed/w", "bulk-key", LIMIT);
		admit(gateway, "/shadowed/w", "bulk-key", 3); // beyond the limit: forwarded all the same
		UpstreamProtection shadowed = protections(gateway).get("shadowed");
		assertThat(shadowed.inFlight(Priority.LOW)).isEqualTo(LIMIT + 3);
		assertThat(sheds(gateway).count("shadowed", Priority.LOW, true)).isEqualTo(wouldBe + 3);
		assertThat(sheds(gateway).count("shadowed", Priority.LOW, false)).isZero();
		assertThat(output).contains("Rate limit shadow-shed").contains("protection=shadowed");
		upstream.releaseAll();
		this.sent.forEach((request) -> assertThat(request.response().join().statusCode()).isEqualTo(200));
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void onceHeldAnswersAreReleasedRequestsAreAdmittedAgain(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		List<Sent> full = admit(gateway, "/protected/r", "bulk-key", LIMIT);
		assertShed(send(gateway, "/protected/r", "bulk-key"), Priority.LOW);
		upstream.release(full.get(0).id());
		assertThat(full.get(0).response().orTimeout(30, TimeUnit.SECONDS).join().statusCode()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(30)).until(() -> backend(gateway).inFlight(Priority.LOW) == LIMIT - 1);
		admit(gateway, "/protected/r", "bulk-key", 1); // the place freed
		assertShed(send(gateway, "/protected/r", "bulk-key"), Priority.LOW); // full again
		releaseAll();
		admit(gateway, "/protected/r", "bulk-key", LIMIT);
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void whileRedisIsDownTheProtectionStillShedsByPriorityAndAdmitsWithinTheLimit(FrontEnd frontEnd) {
		Gateway gateway = gateway(frontEnd);
		List<Sent> admitted = new ArrayList<>();
		redis.kill();
		try {
			admitted.addAll(admit(gateway, "/protected/d", "bulk-key", LIMIT)); // the fallback's decisions
			assertShed(send(gateway, "/protected/d", "bulk-key"), Priority.LOW);
			admitted.addAll(admit(gateway, "/protected/d", "gold-key", 1)); // high within its share
			admitted.addAll(admit(gateway, "/checkout/d", "bulk-key", 1)); // critical
			assertShed(send(gateway, "/protected/d", "bulk-key"), Priority.LOW);
			upstream.releaseAll();
			for (Sent request : admitted) {
				HttpResponse<String> answer = request.response().orTimeout(30, TimeUnit.SECONDS).join();
				assertThat(answer.statusCode()).isEqualTo(200);
				assertThat(answer.headers().firstValue("RateLimit")).as("decided by the local fallback").isEmpty();
			}
		}
		finally {
			redis.restart();
		}
	}

	@ParameterizedTest
	@EnumSource(FrontEnd.class)
	void eachAnswerIsOneLatencySampleAFailureADropAndEveryPlaceIsGivenBack(FrontEnd frontEnd) throws IOException {
		Gateway gateway = gateway(frontEnd);
		Queue<Sample> taken = samples.get(frontEnd);
		taken.clear();
		Sent answered = send(gateway, "/protected/l", "bulk-key");
		assertThat(admitted(answered)).isTrue();
		upstream.release(answered.id());
		assertThat(answered.response().orTimeout(30, TimeUnit.SECONDS).join().statusCode()).isEqualTo(200);
		assertThat(get(gateway, "/protected/l?status=503", "bulk-key").statusCode()).isEqualTo(503);
		assertThat(get(gateway, "/unreachable/l", "bulk-key").statusCode()).isBetween(500, 599);
		await().atMost(Duration.ofSeconds(30)).until(() -> taken.size() >= 3);
		assertThat(taken).extracting(Sample::dropped).containsExactly(false, true, true);
		assertThat(taken).extracting(Sample::priority).containsOnly(Priority.LOW);
		// a client that hangs up before the answer: no sample where the gateway sees it go, its place given back
		String id = nextId();
		try (Socket socket = OpenRequests.sendGet(gateway.port(), "/protected/l?id=" + id, "bulk-key")) {
			await().atMost(Duration.ofSeconds(30)).until(() -> upstream.received(id));
			socket.shutdownOutput();
			if (frontEnd == FrontEnd.WEBFLUX) { // Reactor Netty sees the client go: the exchange is over
				socket.setSoTimeout(30_000);
				assertThat(closedByGateway(socket)).isTrue();
				awaitEmpty(gateway);
			}
		}
		upstream.release(id);
		awaitEmpty(gateway);
		// Tomcat finds a client gone only when it writes the answer: on Server MVC the answer is a sample
		assertThat(taken).hasSize((frontEnd == FrontEnd.WEBFLUX) ? 3 : 4);
	}

	@AfterEach
	void releaseAll() {
		upstream.releaseAll();
		for (Sent request : this.sent) {
			request.response().orTimeout(30, TimeUnit.SECONDS).join();
		}
		this.sent.clear();
		gateways.values().forEach(FrontEndsProtectionIntegrationTest::awaitEmpty);
	}

	@AfterAll
	static void stop() {
		gateways.values().forEach(Gateway::stop);
		upstream.stop();
		redis.close();
	}

	// ---- requests

	/** A request whose answer the upstream holds until released, by its id; its answer. */
	record Sent(String id, CompletableFuture<HttpResponse<String>> response) {
	}

	/** A sample the {@code backend} protection took. */
	record Sample(Priority priority, boolean dropped) {
	}

	/** Send a request the upstream holds (when it gets it). */
	private Sent send(Gateway gateway, String path, String apiKey) {
		String id = nextId();
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path + "?id=" + id))
			.timeout(Duration.ofSeconds(60))
			.header("X-API-Key", apiKey)
			.build();
		Sent sent = new Sent(id, http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
		this.sent.add(sent);
		return sent;
	}

	/**
	 * Whether a request was admitted: the upstream received it (and holds it), rather than the gateway answering it.
	 */
	private static boolean admitted(Sent sent) {
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(5))
			.until(() -> upstream.received(sent.id()) || sent.response().isDone());
		return upstream.received(sent.id());
	}

	/** Send requests the upstream holds, all admitted. */
	private List<Sent> admit(Gateway gateway, String path, String apiKey, int count) {
		List<Sent> admitted = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			admitted.add(send(gateway, path, apiKey));
		}
		for (Sent request : admitted) {
			assertThat(admitted(request)).as("request %s of %s admitted", admitted.indexOf(request) + 1, count)
				.isTrue();
		}
		return admitted;
	}

	/** A request shed: answered 503 overloaded without reaching the upstream, naming its priority. */
	private static HttpResponse<String> assertShed(Sent sent, Priority priority) {
		assertThat(admitted(sent)).as("admitted instead of shed").isFalse();
		HttpResponse<String> response = sent.response().join();
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.body()).contains(RateLimitProblems.OVERLOADED)
			.contains("\"priority\":\"" + priority.tag() + "\"");
		return response;
	}

	private static HttpResponse<String> get(Gateway gateway, String path, String apiKey) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
			.timeout(Duration.ofSeconds(30))
			.header("X-API-Key", apiKey)
			.build();
		return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).orTimeout(60, TimeUnit.SECONDS).join();
	}

	/** Until the gateway's decisions come from Redis again (a killed Redis restarted: the breaker closed). */
	private static void awaitRedisDecides(Gateway gateway) {
		await().atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> get(gateway, "/protected/redis", "gold-key").headers().firstValue("RateLimit").isPresent());
	}

	private static void awaitEmpty(Gateway gateway) {
		await().atMost(Duration.ofSeconds(30))
			.until(() -> protections(gateway).all()
				.stream()
				.allMatch((protection) -> Arrays.stream(Priority.values()).allMatch((p) -> protection.inFlight(p) == 0)));
	}

	/** Whether the gateway closed this connection (without an answer) before its read timeout. */
	private static boolean closedByGateway(Socket socket) throws IOException {
		try {
			return socket.getInputStream().read() < 0;
		}
		catch (SocketException ex) { // closed with a reset
			return true;
		}
	}

	private static String nextId() {
		return Long.toString(ids.incrementAndGet());
	}

	// ---- gateways

	private static synchronized Gateway gateway(FrontEnd frontEnd) {
		return gateways.computeIfAbsent(frontEnd, (started) -> {
			Gateway gateway = started.start(Map.of("spring.profiles.active", "protection", "upstream.uri",
					upstream.uri(), "unreachable.uri", "http://127.0.0.1:" + freePort(), "spring.data.redis.host",
					redis.host(), "spring.data.redis.port", Integer.toString(redis.port())));
			Queue<Sample> taken = new ConcurrentLinkedQueue<>();
			samples.put(started, taken);
			backend(gateway).addSampleListener((protection, priority, latencyNanos, dropped) -> taken
				.add(new Sample(priority, dropped)));
			return gateway;
		});
	}

	private static UpstreamProtections protections(Gateway gateway) {
		return gateway.context().getBean(UpstreamProtections.class);
	}

	private static UpstreamProtection backend(Gateway gateway) {
		return protections(gateway).get("backend");
	}

	private static Sheds sheds(Gateway gateway) {
		return gateway.context().getBean(Sheds.class);
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
