package io.github.ratelimit.gateway.webflux;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.zip.GZIPOutputStream;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.micrometer.core.instrument.Gauge;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Usage routes against odd and hostile answers and requests, through the real gateway and real Redis, in front of an
 * upstream whose answer each test writes ({@link #answer}): every request is answered without a 500, the client's
 * usage bucket holds what the usage limits page says it is charged, and nothing stays reserved (the gauge
 * {@code ratelimit.usage.reserved.in.flight} returns to 0). The bucket holds 1,000 tokens; every route reserves 100
 * ({@code h-body}: {@code json:max_tokens}, at most 400).
 */
@ActiveProfiles("usage-hostile-it")
class UsageHostileIntegrationTest extends BaseRouteIntegrationTest {

	private static final AtomicInteger received = new AtomicInteger();

	private static volatile BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> answer = (request,
			response) -> response.send();

	private static final DisposableServer hostile = HttpServer.create()
		.host("127.0.0.1")
		.port(0)
		.handle((request, response) -> {
			received.incrementAndGet();
			return answer.apply(request, response);
		})
		.bindNow();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(hostile::disposeNow));
	}

	@Autowired
	private RateLimitStore store;

	@Autowired
	private io.github.ratelimit.gateway.properties.LimitResolver limits;

	@DynamicPropertySource
	static void hostileUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("hostile.upstream.uri", () -> "http://127.0.0.1:" + hostile.port());
	}

	@AfterEach
	void nothingStaysReserved() {
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(inFlight()).isZero());
		answer = (request, response) -> response.send();
		received.set(0);
	}

	// ---- usage values in a header

	@Test
	void anExponentInAHeaderIsANumberAsRfc8259WritesIt() {
		answerHeader("2.5e2");
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(750);
	}

	@Test
	void aFractionInAHeaderIsRoundedUp() {
		answerHeader("41.2");
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(958);
	}

	@Test
	void aNegativeHeaderIsChargedTheReservation() {
		answerHeader("-5");
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(900);
	}

	/**
	 * A number above 2^53 is charged 2^53, as any number above it: the bucket owes ten years of refill (the most it
	 * carries).
	 */
	@Test
	void aHugeHeaderIsChargedTheCeiling() {
		answerHeader("1e30");
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(0);
	}

	/**
	 * A number above 2^53 is charged 2^53, as any number above it: the bucket owes ten years of refill (the most it
	 * carries).
	 */
	@Test
	void aHeaderBeyondALongIsChargedTheCeiling() {
		answerHeader("99999999999999999999999");
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(0);
	}

	/**
	 * A number above 2^53 is charged 2^53, as any number above it: the bucket owes ten years of refill (the most it
	 * carries).
	 */
	@Test
	void anExponentBeyondADoubleIsChargedTheCeiling() {
		answerHeader("1e400");
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(0);
	}

	@Test
	void notANumberInAHeaderIsChargedTheReservation() {
		for (String value : new String[] { "NaN", "Infinity", "0x10", "+5", "1_000", "5 tokens", "1e", "--5" }) {
			this.emptyBuckets();
			answerHeader(value);
			get("/h/header", "key-one").expectStatus().isOk();
			awaitRemaining(900);
		}
	}

	/** Several values are not one number: charged the reservation, as an estimate in several values reserves the most. */
	@Test
	void aHeaderWithSeveralValuesIsChargedTheReservation() {
		answer = (request, response) -> response.addHeader("X-Usage-Tokens", "10")
			.addHeader("X-Usage-Tokens", "500")
			.sendString(Mono.just("ok"));
		get("/h/header", "key-one").expectStatus().isOk();
		awaitRemaining(900);
	}

	// ---- usage in a JSON body

	@Test
	void aJsonBodyWithTheFieldTwiceIsChargedTheLast() {
		answerJson("{\"usage\":{\"total_tokens\":500},\"usage\":{\"total_tokens\":10}}");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(990);
	}

	@Test
	void theFieldNestedAtAnotherPathDoesNotCount() {
		answerJson("{\"choices\":[{\"usage\":{\"total_tokens\":500}}],\"x\":{\"usage\":{\"total_tokens\":400}},"
				+ "\"usage\":{\"total_tokens\":57}}");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void aFieldUnder60LevelsOfNestingIsRead() {
		answerJson("{\"deep\":" + "[".repeat(60) + "]".repeat(60) + ",\"usage\":{\"total_tokens\":57}}");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void aBodyNestedDeeperThanTheReaderFollowsIsChargedTheReservationAndReachesTheClientWhole() {
		String deep = "[".repeat(100_000) + "]".repeat(100_000);
		answerJson("{\"deep\":" + deep + ",\"usage\":{\"total_tokens\":57}}");
		this.client.get()
			.uri("/h/json")
			.header("X-API-Key", "key-one")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((body) -> assertThat(body).hasSize(deep.length() + 37).endsWith("\"total_tokens\":57}}"));
		awaitRemaining(900);
	}

	/**
	 * A number above 2^53 is charged 2^53, as any number above it: the bucket owes ten years of refill (the most it
	 * carries).
	 */
	@Test
	void aHugeNumberInTheBodyIsChargedTheCeiling() {
		answerJson("{\"usage\":{\"total_tokens\":" + "9".repeat(200) + "}}");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(0);
	}

	@Test
	void anExponentInTheBodyIsANumber() {
		answerJson("{\"usage\":{\"total_tokens\":1.5E2}}");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(850);
	}

	// ---- estimates read from the request

	@Test
	void anEstimateThatIsNotANumberOfAtLeast0OrAboveTheMostReservesTheMost() {
		answerHeader("1");
		for (String estimate : new String[] { "-1", "-0.5", "1e30", "1e400", "99999999999999999999999", "abc", "0x10" }) {
			this.emptyBuckets();
			reserveHeader(estimate).valueMatches("RateLimit", ".*\"free-chat-tokens-1h\";r=600;.*");
		}
	}

	@Test
	void anEstimateInAnExponentOrAFractionIsRoundedUp() {
		answerHeader("1");
		reserveHeader("1.5e2").valueMatches("RateLimit", ".*\"free-chat-tokens-1h\";r=850;.*");
		this.emptyBuckets();
		reserveHeader("2.5").valueMatches("RateLimit", ".*\"free-chat-tokens-1h\";r=997;.*");
	}

	@Test
	void anEstimateInSeveralHeaderValuesReservesTheMostNotTheSmallest() {
		answerHeader("1");
		this.client.get()
			.uri("/h/reserve-header")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "1", "400")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueMatches("RateLimit", ".*\"free-chat-tokens-1h\";r=600;.*");
	}

	private org.springframework.test.web.reactive.server.HeaderAssertions reserveHeader(String estimate) {
		return this.client.get()
			.uri("/h/reserve-header")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", estimate)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader();
	}

	// ---- streams

	@Test
	void aStreamWithCrlfLinesAndNoFinalBlankLineIsChargedItsUsageEvent() {
		answerStream("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\r\n\r\n"
				+ "data: {\"choices\":[],\"usage\":{\"total_tokens\":57}}\r\n\r\n" + "data: [DONE]");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void aStreamWhoseUsageEventHasNoFinalBlankLineIsChargedTheReservation() {
		answerStream("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\r\n\r\n"
				+ "data: {\"choices\":[],\"usage\":{\"total_tokens\":57}}\r\n");
		get("/h/json", "key-one").expectStatus().isOk();
		// the event is incomplete: the answer reported no usage
		awaitRemaining(900);
	}

	@Test
	void aStreamWithoutSpacesCommentsAndEventNamesIsChargedItsUsageEvent() {
		answerStream(": keep-alive\n\nevent: message\nid: 7\ndata:{\"choices\":[],\"usage\":{\"total_tokens\":57}}\n\n"
				+ "data:[DONE]\n\n");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void aStreamWithCrOnlyLinesIsChargedItsUsageEvent() {
		answerStream("data: {\"choices\":[],\"usage\":{\"total_tokens\":57}}\r\rdata: [DONE]\r\r");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void aStreamWithAMultiLineDataEventIsChargedItsUsage() {
		answerStream("data: {\"choices\":[],\ndata: \"usage\":{\"total_tokens\":57}}\n\ndata: [DONE]\n\n");
		get("/h/json", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	// ---- encodings, methods, statuses without a body

	/** A compressed answer is passed on as sent, and its usage read from a decoded copy (the usage page says so). */
	@Test
	void aGzipEncodedAnswerReachesTheClientAsSentAndIsChargedItsUsage() throws IOException {
		byte[] gzipped = gzip("{\"usage\":{\"total_tokens\":57}}");
		answer = (request, response) -> response.header("Content-Type", "application/json")
			.header("Content-Encoding", "gzip")
			.sendByteArray(Mono.just(gzipped));
		this.client.get()
			.uri("/h/json")
			.header("X-API-Key", "key-one")
			.header("Accept-Encoding", "gzip")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(byte[].class)
			.isEqualTo(gzipped);
		awaitRemaining(943);
	}

	@Test
	void aHeadRequestIsChargedTheHeaderItsAnswerReports() {
		answer = (request, response) -> response.header("X-Usage-Tokens", "57")
			.header("Content-Length", "1000")
			.send();
		this.client.head().uri("/h/header").header("X-API-Key", "key-one").exchange().expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void aHeadRequestOnAJsonRouteIsChargedItsReservation() {
		answer = (request, response) -> response.header("Content-Type", "application/json")
			.header("Content-Length", "1000")
			.send();
		this.client.head().uri("/h/json").header("X-API-Key", "key-one").exchange().expectStatus().isOk();
		awaitRemaining(900);
	}

	@Test
	void answersWithoutABodyAreChargedTheirHeaderOrTheirReservation() {
		for (int status : new int[] { 204, 304 }) {
			this.emptyBuckets();
			answer = (request, response) -> response.status(status).header("X-Usage-Tokens", "57").send();
			get("/h/header", "key-one").expectStatus().isEqualTo(status);
			awaitRemaining(943);
			this.emptyBuckets();
			answer = (request, response) -> response.status(status).header("Content-Type", "application/json").send();
			get("/h/json", "key-one").expectStatus().isEqualTo(status);
			awaitRemaining(900);
		}
	}

	// ---- request bodies

	@Test
	void aChunkedBodyLargerThanTheReadWithTheEstimateAfterItReservesTheMostAndIsForwardedWhole() throws IOException {
		answer = (request, response) -> request.receive()
			.aggregate()
			.asByteArray()
			.defaultIfEmpty(new byte[0])
			.flatMap((body) -> response.header("Content-Type", "application/json")
				.header("X-Received-Bytes", Integer.toString(body.length))
				.sendString(Mono.just("{\"usage\":{\"total_tokens\":30}}"))
				.then());
		String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(10_000) + "\"}],\"max_tokens\":10}";
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /h/body HTTP/1.1\r\nHost: x\r\nX-API-Key: key-one\r\nContent-Type: application/json\r\n"
					+ "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
			for (int i = 0; i < body.length(); i += 1000) {
				String chunk = body.substring(i, Math.min(body.length(), i + 1000));
				out.write((Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n")
					.getBytes(StandardCharsets.US_ASCII));
				out.flush();
			}
			out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			String response = readAll(socket.getInputStream());
			assertThat(response).startsWith("HTTP/1.1 200")
				.contains("X-Received-Bytes: " + body.length())
				.contains("\"free-chat-tokens-1h\";r=600;");
		}
		awaitRemaining(970);
	}

	@Test
	void aClientGoneWhileTheBodyIsReadForTheEstimateLeavesNothingReserved() throws IOException {
		answer = (request, response) -> request.receive().then(response.sendString(Mono.just("{}")).then());
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("POST /h/body HTTP/1.1\r\nHost: x\r\nX-API-Key: key-one\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 100000\r\n\r\n{\"messages\":[").getBytes(StandardCharsets.US_ASCII));
			out.flush();
		}
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(inFlight()).isZero());
		assertThat(read().remaining()).isBetween(1000L, 1000L);
		assertThat(received.get()).isZero();
	}

	@Test
	void aClientGoneAfterTheEstimateWhileTheBodyIsForwardedIsChargedTheReservationOnce() throws IOException {
		answer = (request, response) -> request.receive().then(response.sendString(Mono.just("{}")).then());
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("POST /h/body HTTP/1.1\r\nHost: x\r\nX-API-Key: key-one\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 100000\r\n\r\n{\"max_tokens\":300,\"messages\":[\"" + "x".repeat(5_000))
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(received.get()).isEqualTo(1));
		}
		awaitRemaining(700);
	}

	// ---- with other filters

	@Test
	void aRetryFilterInFrontSettlesEachAttempt() {
		AtomicInteger attempts = new AtomicInteger();
		answer = (request, response) -> (attempts.incrementAndGet() == 1)
				? response.status(503).header("X-Usage-Tokens", "7").send()
				: response.header("X-Usage-Tokens", "57").sendString(Mono.just("ok"));
		get("/h/retry", "key-one").expectStatus().isOk();
		assertThat(attempts.get()).isEqualTo(2);
		// the attempt replaced by the next is settled as cut short: its reservation (100), then 57
		awaitRemaining(843);
	}

	@Test
	void twoRateLimitFiltersOnOneRouteSettleOnce() {
		answerHeader("57");
		get("/h/two", "key-one").expectStatus().isOk();
		awaitRemaining(943);
	}

	@Test
	void countWhenWithUsageGivesBackAnAnswerThatDoesNotCountAndChargesOneThatDoes() {
		answerHeader("57");
		get("/h/count-when", "key-one").expectStatus().isOk();
		awaitRemaining(1000);
		answer = (request, response) -> response.status(401).header("X-Usage-Tokens", "57").send();
		get("/h/count-when", "key-one").expectStatus().isEqualTo(401);
		awaitRemaining(943);
	}

	// ---- support

	private static void answerHeader(String value) {
		answer = (request, response) -> response.header("X-Usage-Tokens", value).sendString(Mono.just("ok"));
	}

	private static void answerJson(String body) {
		answer = (request, response) -> response.header("Content-Type", "application/json")
			.sendString(Mono.just(body));
	}

	private static void answerStream(String body) {
		answer = (request, response) -> response.header("Content-Type", "text/event-stream")
			.sendString(Mono.just(body));
	}

	private static byte[] gzip(String text) throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
			gzip.write(text.getBytes(StandardCharsets.UTF_8));
		}
		return bytes.toByteArray();
	}

	private static String readAll(InputStream in) throws IOException {
		return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
	}

	private double inFlight() {
		Gauge gauge = this.meters.find(MicrometerRateLimitMetrics.USAGE_IN_FLIGHT).tag("group", "chat").gauge();
		return (gauge != null) ? gauge.value() : 0;
	}

	/** Wait for the client's usage bucket to hold this many whole tokens (a refill of 1 allowed). */
	private void awaitRemaining(long expected) {
		await().atMost(10, TimeUnit.SECONDS)
			.untilAsserted(() -> assertThat(read().remaining()).isBetween(expected, expected + 1));
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(inFlight()).isZero());
	}

	/** The client's usage limit in group chat, read from Redis without consuming. */
	private LimitStatus read() {
		PlanLimits planLimits = this.limits.limitsFor("free", "chat");
		ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash("key-one"), "free");
		var decision = this.store.tryConsume(client, planLimits, Cost.NONE).orTimeout(10, TimeUnit.SECONDS).join();
		return decision.statuses().stream().filter((s) -> s.limit().isUsage()).findFirst().orElseThrow();
	}

}
