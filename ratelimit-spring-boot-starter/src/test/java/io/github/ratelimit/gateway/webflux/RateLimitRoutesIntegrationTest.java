package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.webflux.ProblemDetailResponseWriter;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole routes through real HTTP into a real gateway, with buckets in a real Redis.
 */
@ActiveProfiles("gateway-it")
class RateLimitRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Autowired
	RouteLocator routeLocator;

	@Test
	void allowedResponseCarriesIetfFields() {
		this.client.get().uri("/a/x").header("X-API-Key", "key-one").exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=2;w=120")
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-a\";r=1;t=60"));
	}

	@Test
	void bucketsNeverCollideAcrossGroups() {
		// Case 1: route A capacity 2, route B capacity 20, same key: 2xA, 5xB, 1xA
		get("/a/1", "key-one").expectStatus().isOk();
		get("/a/2", "key-one").expectStatus().isOk();
		for (int i = 0; i < 5; i++) {
			get("/b/" + i, "key-one").expectStatus().isOk()
				.expectHeader().valueEquals("RateLimit", "\"free-b\";r=" + (19 - i) + ";t=" + (60 * (i + 1)));
		}
		get("/a/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// another key has its own buckets
		get("/a/1", "key-two").expectStatus().isOk();
	}

	@Test
	void deniedRequestGets429WithRetryAfterAndProblemBody() {
		get("/a/1", "key-one").expectStatus().isOk();
		get("/a/2", "key-one").expectStatus().isOk();
		get("/a/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueEquals("Retry-After", "60")
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-a\";r=0;t=120"))
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=2;w=120")
			.expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody()
			.jsonPath("$.type").isEqualTo(RateLimitProblems.QUOTA_EXCEEDED)
			.jsonPath("$.status").isEqualTo(429)
			.jsonPath("$.instance").isEqualTo("/a/3")
			.jsonPath("$.violated-policies[0]").isEqualTo("free-a")
			.jsonPath("$.violated-policies.length()").isEqualTo(1);
	}

	@Test
	void retryAfterIsExactForOneTokenPerPeriod() {
		// Case 3, scaled to a 3 s period: allowed, then 429 with Retry-After 3, then allowed after waiting 3 s
		get("/slow/1", "key-one").expectStatus().isOk();
		String retryAfter = get("/slow/2", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.returnResult(String.class).getResponseHeaders().getFirst("Retry-After");
		assertThat(retryAfter).isEqualTo("3");
		letTimePass(Duration.ofMillis(1500));
		get("/slow/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueEquals("Retry-After", "2");
		letTimePass(Duration.ofSeconds(2));
		get("/slow/4", "key-one").expectStatus().isOk();
	}

	@Test
	void allLimitsMustAllowAndDenialConsumesNothing() {
		get("/multi/1", "key-one").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-multi-1m\";q=3;w=60, \"free-multi-1h\";q=2;w=3600")
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-multi-1m\";r=2;t=20, \"free-multi-1h\";r=1;t=1800"));
		get("/multi/2", "key-one").expectStatus().isOk();
		get("/multi/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-multi-1m\";r=1;t=40, \"free-multi-1h\";r=0;t=3600"))
			.expectBody()
			.jsonPath("$.violated-policies.length()").isEqualTo(1)
			.jsonPath("$.violated-policies[0]").isEqualTo("free-multi-1h");
		// the per-minute bucket was not consumed by the denial
		get("/multi/4", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-multi-1m\";r=1;t=40, \"free-multi-1h\";r=0;t=3600"));
	}

	@Test
	void costTakesSeveralTokens() {
		get("/heavy/1", "key-one").expectStatus().isOk().expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-heavy\";r=6;t=240"));
		get("/heavy/2", "key-one").expectStatus().isOk().expectHeader().valueMatches("RateLimit", aboutRateLimit("\"free-heavy\";r=2;t=480"));
		get("/heavy/3", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueEquals("Retry-After", "120");
	}

	@Test
	void missingOrEmptyKeyIsLimitedByIpUnderTheAnonymousPlan() {
		// Case 4: no header and an empty header both fall back to the caller's IP, anonymous plan (capacity 2)
		this.client.get().uri("/b/1").exchange().expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"anonymous-b\";q=2;w=120");
		this.client.get().uri("/b/2").header("X-API-Key", "").exchange().expectStatus().isOk();
		this.client.get().uri("/b/3").header("X-API-Key", "").exchange()
			.expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// an unknown key is limited the same way, by IP
		this.client.get().uri("/b/4").header("X-API-Key", "no-such-key").exchange()
			.expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// another client with an empty key does not share a bucket for ""
		clientFrom("127.0.0.3").get().uri("/b/5").header("X-API-Key", "").exchange()
			.expectStatus().isOk();
		List<String> keys = List.of(redis.command("KEYS", "rl:{*").split("\n"));
		assertThat(keys).containsExactlyInAnyOrder("rl:{b|ip:127.0.0.1}:0", "rl:{b|ip:127.0.0.3}:0");
		assertThat(keys).noneMatch((k) -> k.contains(ApiKeyHasher.hash("")) || k.contains("k:}"));
	}

	@Test
	void ipKeyedRouteLimitsEachDirectClientSeparately() {
		// Case 6: capacity 2, two direct clients without X-Forwarded-For: 2 each, then a 3rd from A
		WebTestClient a = clientFrom("127.0.0.10");
		WebTestClient b = clientFrom("127.0.0.11");
		a.get().uri("/ip/1").exchange().expectStatus().isOk();
		a.get().uri("/ip/2").exchange().expectStatus().isOk();
		b.get().uri("/ip/1").exchange().expectStatus().isOk();
		b.get().uri("/ip/2").header("X-API-Key", "key-one").exchange().expectStatus().isOk();
		a.get().uri("/ip/3").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void clientWrittenForwardedForEntriesAreNotTrusted() {
		// one trusted proxy: only the rightmost X-Forwarded-For entry counts; rotating the leftmost gains nothing
		for (int i = 1; i <= 2; i++) {
			this.client.get().uri("/ip/" + i).header("X-Forwarded-For", "6.6.6." + i + ", 203.0.113.9").exchange()
				.expectStatus().isOk();
		}
		this.client.get().uri("/ip/3").header("X-Forwarded-For", "6.6.6.3, 203.0.113.9").exchange()
			.expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// a different proxied client is separate
		this.client.get().uri("/ip/4").header("X-Forwarded-For", "203.0.113.10").exchange().expectStatus().isOk();
		// a forwarded entry that is not an IP address falls back to the peer address, never a shared bucket
		this.client.get().uri("/ip/5").header("X-Forwarded-For", "unknown").exchange().expectStatus().isOk();
		assertThat(redis.command("EXISTS", "rl:{ip|ip:127.0.0.1}:0")).isEqualTo("1");
	}

	@Test
	void fastRateAdmitsCapacityPlusRefillWithoutErrors() {
		// Case 3: 2,000 per second, capacity 2,000: 2,500 requests as fast as possible
		WebClient web = pooledWebClient();
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		long start = System.nanoTime();
		Flux.range(0, 2_500)
			.flatMap((i) -> web.get().uri("/fast/" + i).header("X-API-Key", "key-one")
				.exchangeToMono((r) -> r.releaseBody().thenReturn(r.statusCode().value())), 32)
			.doOnNext((status) -> statuses.computeIfAbsent(status, (s) -> new AtomicInteger()).incrementAndGet())
			.blockLast(Duration.ofSeconds(60));
		double seconds = (System.nanoTime() - start) / 1e9;
		int admitted = statuses.getOrDefault(200, new AtomicInteger()).get();
		int denied = statuses.getOrDefault(429, new AtomicInteger()).get();
		assertThat(admitted + denied).as("only 200 and 429, got %s", statuses).isEqualTo(2_500);
		long theory = Math.min(2_500, 2_000 + (long) Math.ceil(2_000 * seconds));
		assertThat(admitted).isBetween(2_000, (int) theory);
	}

	@Test
	void everyKeyHasTtlNoLongerThanTimeToRefillFully() {
		// Case 5: 20 concurrent clients, 10,000 requests over 1,000 keys, then SCAN every key's TTL
		WebClient web = pooledWebClient();
		List<Integer> failures = new ArrayList<>();
		Flux.range(0, 10_000)
			.flatMap((i) -> web.get().uri("/load/" + i).header("X-API-Key", "load-" + (i % 1_000))
				.exchangeToMono((r) -> r.releaseBody().thenReturn(r.statusCode())), 20)
			.filter(HttpStatusCode::isError)
			.doOnNext((s) -> failures.add(s.value()))
			.blockLast(Duration.ofSeconds(120));
		assertThat(failures).isEmpty(); // 10 requests per key fit the capacity of 20
		List<String> keys = scanAll("rl:{*");
		assertThat(keys).hasSize(1_000);
		long timeToFullMs = 60_000L * 10; // 10 tokens taken, 1 per minute back
		for (String key : keys) {
			long ttl = Long.parseLong(redis.command("PTTL", key));
			assertThat(ttl).as("TTL of %s", key).isPositive().isLessThanOrEqualTo(timeToFullMs + 1_000);
		}
	}

	@Test
	void aHotClientFarOverItsLimitCostsAlmostNoRedisCalls() {
		get("/a/1", "key-one").expectStatus().isOk();
		get("/a/2", "key-one").expectStatus().isOk();
		long before = scriptCalls();
		int denied = 0;
		for (int i = 0; i < 300; i++) {
			EntityExchangeResult<byte[]> result = this.client.get().uri("/a/x" + i).header("X-API-Key", "key-one")
				.exchange().expectBody().returnResult();
			assertThat(result.getStatus().value()).isEqualTo(429);
			assertThat(result.getResponseHeaders().getFirst("Retry-After")).isNotNull();
			assertThat(result.getResponseHeaders().getFirst("RateLimit")).startsWith("\"free-a\";r=0;t=");
			denied++;
		}
		double perDenial = (double) (scriptCalls() - before) / denied;
		System.out.println("Redis script calls per denied request: " + perDenial);
		assertThat(perDenial).isLessThanOrEqualTo(0.02);
	}

	@Test
	void ratelimitsEndpointIsNotExposedUnlessTheApplicationOptsIn() {
		this.client.get().uri("/actuator/ratelimits").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/health").exchange().expectStatus().isOk();
	}

	@Test
	void apiKeysAppearInRedisOnlyHashed() {
		get("/a/1", "key-one").expectStatus().isOk();
		String keys = redis.command("KEYS", "*");
		assertThat(keys).doesNotContain("key-one").contains("k:" + ApiKeyHasher.hash("key-one"));
	}

	@Test
	void routeFiltersHaveReadableDescriptions() {
		// the filter's toString, as /actuator/gateway/routes shows it
		List<String> filters = this.routeLocator.getRoutes()
			.filter((route) -> route.getId().equals("heavy"))
			.flatMapIterable((route) -> route.getFilters())
			.map(Object::toString)
			.collectList()
			.block(Duration.ofSeconds(5));
		assertThat(filters).anySatisfy((f) -> assertThat(f).contains("RateLimit")
			.contains("group = 'heavy'")
			.contains("keyBy = API_KEY")
			.contains("cost = 4")
			.contains("critical = false"));
	}

	/** EVALSHA + EVAL calls Redis has served, from INFO commandstats. */
	private static long scriptCalls() {
		long calls = 0;
		for (String line : redis.command("INFO", "commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				String value = line.substring(line.indexOf("calls=") + 6);
				calls += Long.parseLong(value.substring(0, value.indexOf(',')));
			}
		}
		return calls;
	}

	private static List<String> scanAll(String pattern) {
		List<String> keys = new ArrayList<>();
		String cursor = "0";
		do {
			String[] reply = redis.command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000").split("\n");
			cursor = reply[0];
			for (int i = 1; i < reply.length; i++) {
				keys.add(reply[i]);
			}
		}
		while (!cursor.equals("0"));
		return keys;
	}

}
