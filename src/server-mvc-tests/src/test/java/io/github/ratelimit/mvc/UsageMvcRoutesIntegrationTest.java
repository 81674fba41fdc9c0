package io.github.ratelimit.mvc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.route.RateLimitArguments;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

import static io.github.ratelimit.gateway.mvc.RateLimitFilterFunctions.rateLimit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;

/**
 * The usage cases of the starter's WebFlux {@code UsageRoutesIntegrationTest}, through a real Gateway Server MVC
 * (Tomcat), a real upstream that reports usage ({@link UsageUpstream}) and real Redis: a request reserves its
 * estimate with its other limits, and once its answer is over it is charged what the answer reported (JSON body, the
 * last event of a stream, a header, the bytes sent), or given back everything when its status does not count. The
 * client's usage bucket is read from Redis without consuming ({@link #read}); a settlement reaches Redis after the
 * answer, so the tests wait for it. Routes whose own handler answers asynchronously ({@link AsyncRoutes}: the body
 * written after the route returned, on an async dispatch or another thread) are charged what that body reports too.
 */
@ActiveProfiles(value = "usage-mvc-it", inheritProfiles = false)
@Import(UsageMvcRoutesIntegrationTest.AsyncRoutes.class)
class UsageMvcRoutesIntegrationTest extends ServerMvcRouteIntegrationTest {

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	@Autowired
	private RateLimitStore store;

	@Autowired
	private LimitResolver limits;

	@Autowired
	private MeterRegistry meters;

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@Test
	void aJsonAnswerIsChargedTheUsageItReportsAndTheRestOfTheReservationGoesBack() {
		HttpResponse<String> response = get("/v1/chat/completions?used=120", "X-API-Key", "key-one", "X-Max-Tokens",
				"300");
		assertThat(response.statusCode()).isEqualTo(200);
		// the fields are sent before the body: remaining as of the reservation (1,000 - 300)
		assertThat(response.headers().firstValue("RateLimit"))
			.contains("\"free-chat-1h\";r=99;t=36, \"free-chat-tokens-1h\";r=700;t=1080");
		assertThat(response.body()).endsWith("\"total_tokens\":120}}");
		awaitRemaining("chat", 880);
	}

	@Test
	void theEstimateIsReadFromTheRequestBodyWhichIsForwardedWhole() throws Exception {
		String body = "{\"model\":\"m\",\"max_tokens\":250,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		HttpResponse<String> response = post("/v1/body?used=120", body);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("X-Received-Bytes")).contains(Integer.toString(body.length()));
		assertThat(response.headers().firstValue("RateLimit").orElseThrow()).contains("\"free-chat-tokens-1h\";r=750;");
		awaitRemaining("chat", 880);
	}

	@Test
	void anEstimateBeyondTheBodyReadReservesTheMostAndTheBodyIsStillForwardedWhole() throws Exception {
		// max_tokens after 10 KB of messages: beyond the 2 KB read (ratelimit.usage.reserve-body-limit)
		String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(10_000)
				+ "\"}],\"max_tokens\":10}";
		HttpResponse<String> response = post("/v1/body?used=30", body);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("X-Received-Bytes")).contains(Integer.toString(body.length()));
		assertThat(response.headers().firstValue("RateLimit").orElseThrow()).contains("\"free-chat-tokens-1h\";r=600;");
		awaitRemaining("chat", 970);
	}

	private HttpResponse<String> post(String path, String body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("X-API-Key", "key-one")
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(request,
				HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void aStreamIsChargedTheUsageOfItsLastEventThatCarriesIt() {
		HttpResponse<String> response = get("/v1/chat/completions?stream=true&used=57", "X-API-Key", "key-one",
				"X-Max-Tokens", "300");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).contains("\"total_tokens\":57").endsWith("data: [DONE]\n\n");
		awaitRemaining("chat", 943);
	}

	@Test
	void anAnswerLargerThanItsEstimateTakesTheBucketBelowZeroAndTheNextRequestWaitsExactlyForIt() {
		// 100 reserved, 600 used: 400 left; then 100 reserved, 600 used: 200 owed
		assertThat(get("/v1/header?used=600", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		awaitRemaining("chat", 400);
		assertThat(get("/v1/header?used=600", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(read("chat").retryAfterMillis())
			.isGreaterThan(0));
		// 200 owed + 100 to reserve = 300 tokens at 1,000 per hour: 1,080 s
		HttpResponse<String> denied = get("/v1/header?used=1", "X-API-Key", "key-one");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.headers().firstValue("Retry-After")).contains("1080");
		assertThat(denied.headers().firstValue("RateLimit-Policy"))
			.contains("\"free-chat-1h\";q=100;w=3600, \"free-chat-tokens-1h\";q=1000;w=3600;qu=\"tokens\"");
	}

	@Test
	void aRequestWhoseEstimateDoesNotFitIsDeniedWithTheExactRetryAfter() {
		// 400 reserved (the most a request may: reserve-max), 900 used: 100 left
		assertThat(get("/v1/chat/completions?used=900", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		awaitRemaining("chat", 100);
		// an estimate of 250 needs 150 more: 540 s
		HttpResponse<String> denied = get("/v1/chat/completions?used=1", "X-API-Key", "key-one", "X-Max-Tokens",
				"250");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.headers().firstValue("Retry-After")).contains("540");
		// an estimate that fits passes
		assertThat(get("/v1/chat/completions?used=1", "X-API-Key", "key-one", "X-Max-Tokens", "90").statusCode())
			.isEqualTo(200);
	}

	@Test
	void bytesAreChargedAsSentWhateverTheEstimate() {
		assertThat(get("/v1/download?size=1500", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		awaitRemaining("downloads", 8500);
		assertThat(get("/v1/download?size=5000", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		awaitRemaining("downloads", 3500);
	}

	@Test
	void failedLoginsCountAndSuccessfulOnesAreGivenBack() {
		for (int i = 0; i < 5; i++) {
			assertThat(get("/v1/login?status=200").statusCode()).isEqualTo(200);
			// given back once the answer is over (after the client has it): the next attempt waits for that
			await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(readLogin().remaining()).isEqualTo(3));
		}
		for (int i = 0; i < 3; i++) {
			assertThat(get("/v1/login?status=401").statusCode()).isEqualTo(401);
		}
		// three failures per hour: the fourth attempt is refused, whatever it would have been
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
			HttpResponse<String> refused = get("/v1/login?status=200");
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.headers().firstValue("Retry-After")).contains("1200");
		});
	}

	@Test
	void anUpstreamThatNeverAnswersIsChargedTheReservation() {
		double charged = charged("chat");
		HttpResponse<String> response = get("/v1/chat/completions?used=5&fail=true", "X-API-Key", "key-one",
				"X-Max-Tokens", "300");
		assertThat(response.statusCode()).isBetween(500, 599);
		awaitRemaining("chat", 700);
		awaitCharged("chat", charged + 300); // settled, not left reserved
	}

	/** The upstream's answer decides: the rest of the stream is read for its usage once the client has gone. */
	@Test
	void aClientGoneMidStreamIsChargedTheUsageItsStreamReports() throws IOException {
		double charged = charged("chat");
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("GET /v1/chat/completions?stream=true&used=57&every=300 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
					+ "X-API-Key: key-one\r\nX-Max-Tokens: 300\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			String first = readUntil(socket.getInputStream(), "\n\n"); // the head and the first event, then closed
			assertThat(first).startsWith("HTTP/1.1 200").contains("data: ");
		}
		awaitRemaining("chat", 943);
		awaitCharged("chat", charged + 57);
	}

	@Test
	void anAnswerThatIsNotJsonIsChargedItsReservationAndCounted() {
		double before = problems("chat", "not-json");
		HttpResponse<String> response = get("/v1/chat/completions?used=5&json=bad", "X-API-Key", "key-one",
				"X-Max-Tokens", "300");
		assertThat(response.statusCode()).isEqualTo(200);
		awaitRemaining("chat", 700);
		assertThat(problems("chat", "not-json")).isEqualTo(before + 1);
		assertThat(this.meters.get(MicrometerRateLimitMetrics.USAGE_CHARGED).tag("route", "chat").counter().count())
			.isGreaterThanOrEqualTo(300);
	}

	@Test
	void anAsynchronousAnswerIsChargedTheBytesItsDispatchWrites() {
		HttpResponse<String> response = get("/v1/async/download?size=1500", "X-API-Key", "key-one");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).hasSize(1500);
		awaitRemaining("downloads", 8500);
	}

	@Test
	void anEventStreamWrittenAfterTheRouteReturnedIsChargedItsLastEventThatCarriesUsage() {
		HttpResponse<String> response = get("/v1/async/events?used=57", "X-API-Key", "key-one", "X-Max-Tokens", "300");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).contains("\"total_tokens\":57").contains("[DONE]");
		awaitRemaining("chat", 943);
	}

	/** What a connection received up to the first event's end (the head's blank line passed): the head and it. */
	private static String readUntil(InputStream in, String eventEnd) throws IOException {
		StringBuilder received = new StringBuilder();
		int headEnd = -1;
		byte[] buffer = new byte[1024];
		while (true) {
			int read = in.read(buffer);
			if (read < 0) {
				throw new IOException("closed before the first event: " + received);
			}
			received.append(new String(buffer, 0, read, StandardCharsets.US_ASCII));
			if (headEnd < 0) {
				headEnd = received.indexOf("\r\n\r\n");
			}
			if (headEnd >= 0 && received.indexOf(eventEnd, headEnd + 4) >= 0) {
				return received.toString();
			}
		}
	}

	private double problems(String route, String problem) {
		var counter = this.meters.find(MicrometerRateLimitMetrics.USAGE_PROBLEMS)
			.tags("route", route, "problem", problem)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private double charged(String route) {
		var counter = this.meters.find(MicrometerRateLimitMetrics.USAGE_CHARGED).tag("route", route).counter();
		return (counter != null) ? counter.count() : 0;
	}

	/** Wait for a route's {@code ratelimit.usage.charged} to reach this many units: its requests settled. */
	private void awaitCharged(String route, double expected) {
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(charged(route)).isEqualTo(expected));
	}

	/** Wait for the client's usage bucket of a group to hold this many whole tokens (a refill of 1 allowed). */
	private void awaitRemaining(String group, long expected) {
		await().atMost(10, TimeUnit.SECONDS)
			.untilAsserted(() -> assertThat(read(group).remaining()).isBetween(expected, expected + 1));
	}

	/** The login limit of the tests' client address, read from Redis without consuming. */
	private LimitStatus readLogin() {
		PlanLimits planLimits = this.limits.limitsFor("anonymous", "login");
		ClientKey client = new ClientKey(ClientKey.Kind.IP, "127.0.0.1", "anonymous");
		return this.store.tryConsume(client, planLimits, Cost.NONE)
			.orTimeout(10, TimeUnit.SECONDS)
			.join()
			.statuses()
			.get(0);
	}

	/** The client's usage limit in a group, read from Redis without consuming. */
	private LimitStatus read(String group) {
		PlanLimits planLimits = this.limits.limitsFor("free", group);
		ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash("key-one"), "free");
		var decision = this.store.tryConsume(client, planLimits, Cost.NONE).orTimeout(10, TimeUnit.SECONDS).join();
		return decision.statuses().stream().filter((s) -> s.limit().isUsage()).findFirst().orElseThrow();
	}

	/**
	 * Routes whose own handler answers after the route returned, with usage: {@code /v1/async/download?size=N} an
	 * asynchronous response of N bytes ({@link ServerResponse#async}, written on the async dispatch), and
	 * {@code /v1/async/events?used=N} the chat stream's events sent from another thread ({@link ServerResponse#sse}).
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class AsyncRoutes {

		private static final Executor later = CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS);

		@Bean
		RouterFunction<ServerResponse> asyncUsageRoutes() {
			return route("async-download").GET("/v1/async/download", AsyncRoutes::download)
				.filter(rateLimit(new RateLimitArguments().setGroup("downloads").setUsage("bytes").setReserve("2000")))
				.build()
				.and(route("async-events").GET("/v1/async/events", AsyncRoutes::events)
					.filter(rateLimit(new RateLimitArguments().setGroup("chat")
						.setUsage("json:usage.total_tokens")
						.setReserve("header:X-Max-Tokens")
						.setReserveMax(400L)))
					.build());
		}

		private static ServerResponse download(ServerRequest request) {
			int size = Integer.parseInt(request.param("size").orElse("0"));
			return ServerResponse.async(CompletableFuture.supplyAsync(
					() -> ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(new byte[size]), later));
		}

		private static ServerResponse events(ServerRequest request) {
			String used = request.param("used").orElse("0");
			return ServerResponse.sse((sse) -> later.execute(() -> {
				try {
					for (int i = 0; i < 5; i++) {
						sse.data("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word " + i + "\"}}]}");
					}
					sse.data("{\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"total_tokens\":" + used + "}}");
					sse.data("[DONE]");
					sse.complete();
				}
				catch (IOException | RuntimeException ex) {
					sse.error(ex);
				}
			}));
		}

	}

}
