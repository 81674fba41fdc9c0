package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.properties.LimitResolver;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.HeaderAssertions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Routes whose answers decide what a request is charged, through the real gateway, a real upstream that reports
 * usage ({@link UsageUpstream}) and real Redis: a request reserves its estimate with its other limits, and once its
 * answer is over it is charged what the answer reported (JSON body, the last event of a stream, a header, the bytes
 * sent), or given back everything when its status does not count. The client's usage bucket is read from Redis
 * without consuming ({@link #remainingTokens}); a settlement reaches Redis after the answer, so the tests wait for
 * it.
 */
@ActiveProfiles("usage-it")
class UsageRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	@Autowired
	private RateLimitStore store;

	@Autowired
	private LimitResolver limits;

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@Test
	void aJsonAnswerIsChargedTheUsageItReportsAndTheRestOfTheReservationGoesBack() {
		this.client.get()
			.uri("/v1/chat/completions?used=120")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "300")
			.exchange()
			.expectStatus()
			.isOk()
			// the fields are sent before the body: remaining as of the reservation (1,000 - 300)
			.expectHeader()
			.valueEquals("RateLimit", "\"free-chat-1h\";r=99;t=36, \"free-chat-tokens-1h\";r=700;t=1080");
		awaitRemaining("chat", 880);
		// every reservation of this instance has been settled
		await().atMost(10, TimeUnit.SECONDS)
			.untilAsserted(() -> assertThat(this.meters.get(MicrometerRateLimitMetrics.USAGE_IN_FLIGHT)
				.tag("group", "chat")
				.gauge()
				.value()).isZero());
	}

	@Test
	void aMonthlyQuotaInTokensIsChargedWhatTheAnswersReportAndDeniesUntilTheMonthEnds() {
		QuotaPeriod month = QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneOffset.UTC);
		this.client.get()
			.uri("/v1/monthly/x?used=120")
			.header("X-API-Key", "key-one")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"free-monthly-chat\";q=100;w=3600, "
					+ "\"free-monthly-chat-tokens-month\";q=1000;w=" + month.seconds(Instant.now()) + ";qu=\"tokens\"");
		awaitRemaining("monthly-chat", 880);
		// an answer beyond what is left: charged in full, the month's count above its limit
		this.client.get()
			.uri("/v1/monthly/x?used=950")
			.header("X-API-Key", "key-one")
			.exchange()
			.expectStatus()
			.isOk();
		await().atMost(10, TimeUnit.SECONDS)
			.untilAsserted(() -> assertThat(redis.command("HGET",
					"rl:{monthly-chat|k:" + ApiKeyHasher.hash("key-one") + "}:1:q", "c")).isEqualTo("1070"));
		long untilReset = month.untilEnd(Instant.now()).toSeconds();
		String retryAfter = this.client.get()
			.uri("/v1/monthly/x?used=1")
			.header("X-API-Key", "key-one")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.returnResult(String.class)
			.getResponseHeaders()
			.getFirst("Retry-After");
		assertThat(Long.parseLong(retryAfter)).isBetween(untilReset - 2, untilReset + 2);
	}

	@Test
	void theEstimateIsReadFromTheRequestBodyWhichIsForwardedWhole() {
		String body = "{\"model\":\"m\",\"max_tokens\":250,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		postWhole("/v1/body?used=120", body).valueEquals("RateLimit",
				"\"free-chat-1h\";r=99;t=36, \"free-chat-tokens-1h\";r=750;t=900");
		awaitRemaining("chat", 880);
	}

	@Test
	void anEstimateBeyondTheBodyReadReservesTheMostAndTheBodyIsStillForwardedWhole() {
		// max_tokens after 10 KB of messages: beyond the 2 KB read (ratelimit.usage.reserve-body-limit)
		String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(10_000)
				+ "\"}],\"max_tokens\":10}";
		postWhole("/v1/body?used=30", body).valueEquals("RateLimit",
				"\"free-chat-1h\";r=99;t=36, \"free-chat-tokens-1h\";r=600;t=1440");
		awaitRemaining("chat", 970);
	}

	/** POST a JSON body for key-one: answered 200, the upstream having received the whole body. */
	private HeaderAssertions postWhole(String path, String body) {
		return this.client.post()
			.uri(path)
			.header("X-API-Key", "key-one")
			.header("Content-Type", "application/json")
			.bodyValue(body)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("X-Received-Bytes", Integer.toString(body.length()))
			.expectHeader();
	}

	@Test
	void aStreamIsChargedTheUsageOfItsLastEventThatCarriesIt() {
		this.client.get()
			.uri("/v1/chat/completions?stream=true&used=57")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "300")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("\"total_tokens\":57").endsWith("data: [DONE]\n\n"));
		awaitRemaining("chat", 943);
	}

	@Test
	void anAnswerLargerThanItsEstimateTakesTheBucketBelowZeroAndTheNextRequestWaitsExactlyForIt() {
		// 100 reserved, 600 used: 400 left; then 100 reserved, 600 used: 200 owed
		get("/v1/header?used=600", "key-one").expectStatus().isOk();
		awaitRemaining("chat", 400);
		get("/v1/header?used=600", "key-one").expectStatus().isOk();
		await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(read("chat").retryAfterMillis())
			.isGreaterThan(0));
		// 200 owed + 100 to reserve = 300 tokens at 1,000 per hour: 1,080 s
		get("/v1/header?used=1", "key-one").expectStatus()
			.isEqualTo(429)
			.expectHeader()
			.valueEquals("Retry-After", "1080")
			.expectHeader()
			.valueEquals("RateLimit-Policy",
					"\"free-chat-1h\";q=100;w=3600, \"free-chat-tokens-1h\";q=1000;w=3600;qu=\"tokens\"");
	}

	@Test
	void aRequestWhoseEstimateDoesNotFitIsDeniedWithTheExactRetryAfter() {
		// 400 reserved (the most a request may: reserve-max), 900 used: 100 left
		get("/v1/chat/completions?used=900", "key-one").expectStatus().isOk();
		awaitRemaining("chat", 100);
		// an estimate of 250 needs 150 more: 540 s
		this.client.get()
			.uri("/v1/chat/completions?used=1")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "250")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectHeader()
			.valueEquals("Retry-After", "540");
		// an estimate that fits passes
		this.client.get()
			.uri("/v1/chat/completions?used=1")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "90")
			.exchange()
			.expectStatus()
			.isOk();
	}

	@Test
	void aShadowRouteSettlesWhatItAdmittedAndNothingForWhatItLetThrough() {
		get("/v1/shadow?used=30", "key-one").expectStatus().isOk();
		awaitRemaining("chat", 970);
		get("/v1/header?used=920", "key-one").expectStatus().isOk();
		awaitRemaining("chat", 50);
		// over the limit: let through (shadow), reserved nothing, so its answer charges nothing
		get("/v1/shadow?used=500", "key-one").expectStatus().isOk();
		assertThat(usageUpstream.received()).isPositive();
		awaitRemaining("chat", 50);
		assertThat(read("chat").remaining()).isBetween(50L, 51L);
	}

	@Test
	void theDenialNamesTheUsagePolicyAndTheEndpointShowsTheUnitAndTheRoutesUsage() {
		get("/v1/chat/completions?used=990", "key-one").expectStatus().isOk();
		awaitRemaining("chat", 10);
		get("/v1/chat/completions?used=1", "key-one").expectStatus()
			.isEqualTo(429)
			.expectBody()
			.jsonPath("$.violated-policies")
			.isEqualTo(java.util.List.of("free-chat-tokens-1h"));
		this.client.get()
			.uri("/actuator/ratelimits")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.routes.chat.usage")
			.isEqualTo("json:usage.total_tokens")
			.jsonPath("$.routes.chat.reserveMax")
			.isEqualTo(400)
			.jsonPath("$.routes.login.countWhen")
			.isEqualTo(java.util.List.of(401, 403));
		this.client.get()
			.uri("/actuator/ratelimits/chat?apiKey=key-one")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.buckets[1].unit")
			.isEqualTo("tokens")
			.jsonPath("$.buckets[1].tokens")
			.value((tokens) -> assertThat(((Number) tokens).longValue()).isBetween(10L, 11L));
	}

	@Test
	void bytesAreChargedAsSentWhateverTheEstimate() {
		get("/v1/download?size=1500", "key-one").expectStatus().isOk();
		awaitRemaining("downloads", 8500);
		get("/v1/download?size=5000", "key-one").expectStatus().isOk();
		awaitRemaining("downloads", 3500);
	}

	@Test
	void failedLoginsCountAndSuccessfulOnesAreGivenBack() {
		for (int i = 0; i < 5; i++) {
			this.client.get().uri("/v1/login?status=200").exchange().expectStatus().isOk();
			// given back once the answer is over (after the client has it): the next attempt waits for that
			await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(readLogin().remaining()).isEqualTo(3));
		}
		for (int i = 0; i < 3; i++) {
			this.client.get().uri("/v1/login?status=401").exchange().expectStatus().isEqualTo(401);
		}
		// three failures per hour: the fourth attempt is refused, whatever it would have been
		await().atMost(10, TimeUnit.SECONDS)
			.untilAsserted(() -> this.client.get()
				.uri("/v1/login?status=200")
				.exchange()
				.expectStatus()
				.isEqualTo(429)
				.expectHeader()
				.valueEquals("Retry-After", "1200"));
	}

	@Test
	void anUpstreamThatNeverAnswersIsChargedTheReservation() {
		this.client.get()
			.uri("/v1/chat/completions?used=5&fail=true")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "300")
			.exchange()
			.expectStatus()
			.is5xxServerError();
		awaitRemaining("chat", 700);
	}

	/** The upstream's answer decides: the rest of the stream is read for its usage once the client has gone. */
	@Test
	void aClientGoneMidStreamIsChargedTheUsageItsStreamReports() {
		HttpClient http = HttpClient.create(ConnectionProvider.newConnection())
			.headers((h) -> h.add("X-API-Key", "key-one").add("X-Max-Tokens", "300"));
		String first = http.get()
			.uri("http://127.0.0.1:" + this.port + "/v1/chat/completions?stream=true&used=57&every=300")
			.responseContent()
			.asString()
			.next() // the first event, then the connection is closed
			.block(Duration.ofSeconds(10));
		assertThat(first).startsWith("data: ");
		awaitRemaining("chat", 943);
	}

	@Test
	void anAnswerThatIsNotJsonIsChargedItsReservationAndCounted() {
		double before = problems("chat", "not-json");
		this.client.get()
			.uri("/v1/chat/completions?used=5&json=bad")
			.header("X-API-Key", "key-one")
			.header("X-Max-Tokens", "300")
			.exchange()
			.expectStatus()
			.isOk();
		// the reservation leaves 700 before the settlement too: the problem is counted once the exchange has ended
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(problems("chat", "not-json")).isEqualTo(before + 1));
		awaitRemaining("chat", 700);
		assertThat(this.meters.get(MicrometerRateLimitMetrics.USAGE_CHARGED).tag("route", "chat").counter().count())
			.isGreaterThanOrEqualTo(300);
	}

	private double problems(String route, String problem) {
		var counter = this.meters.find(MicrometerRateLimitMetrics.USAGE_PROBLEMS)
			.tags("route", route, "problem", problem)
			.counter();
		return (counter != null) ? counter.count() : 0;
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

}
