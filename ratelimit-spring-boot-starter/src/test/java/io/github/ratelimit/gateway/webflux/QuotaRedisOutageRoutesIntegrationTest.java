package io.github.ratelimit.gateway.webflux;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.micrometer.core.instrument.Counter;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A quota while Redis is unavailable (profile {@code quota-outage-it}: 200 per day, 2 instances configured), through a
 * real gateway on a redis-server of its own that the test kills: a normal route fails open and admits this instance's
 * share of what is left of the day, {@code floor(200 * untilEnd / (2 * 24 h))}, then answers 429 with Retry-After until
 * the day's end; a critical route answers 503 as every critical route does without Redis. The plan's day is in a fixed
 * offset chosen so that it is about half over when the context starts.
 */
@ActiveProfiles("quota-outage-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=100ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s", "ratelimit.fallback.instances=2",
		"ratelimit.fallback.learn-instances=false" })
class QuotaRedisOutageRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	private static final long LIMIT = 200;

	private static final int INSTANCES = 2;

	/** The offset whose local time is 12:00 (to the minute) when this class is loaded. */
	private static final ZoneOffset ZONE = noonNow();

	@DynamicPropertySource
	static void quotaZone(DynamicPropertyRegistry registry) {
		registry.add("ratelimit.plans.free.quota-zone", ZONE::getId);
	}

	@Test
	void aQuotaRouteFailsOpenWithThisInstancesShareOfWhatIsLeftOfThePeriod() {
		double allowedBefore = count("fallback-allowed");
		get("/quota/redis", "key-one").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-quota-day\";q=200;w=86400");
		redis.kill();
		// the share is taken when the client's first local decision starts its count: between these two
		long most = share(System.currentTimeMillis());
		EntityExchangeResult<byte[]> first = exchange("/quota/0");
		long least = share(System.currentTimeMillis());
		assertThat(first.getStatus().value()).isEqualTo(200);
		assertThat(first.getResponseHeaders().getFirst("RateLimit")).isNull();
		long admitted = 1;
		EntityExchangeResult<byte[]> denied = null;
		long beforeDenial = 0;
		while (denied == null && admitted <= LIMIT) {
			beforeDenial = System.currentTimeMillis();
			EntityExchangeResult<byte[]> next = exchange("/quota/" + admitted);
			if (next.getStatus().value() == 429) {
				denied = next;
			}
			else {
				assertThat(next.getStatus().value()).as("request %d", admitted).isEqualTo(200);
				admitted++;
			}
		}
		long afterDenial = System.currentTimeMillis();
		System.out.println("Quota 200 per day in " + ZONE + ", 2 instances, Redis killed: " + admitted
				+ " admitted here (share " + least + " to " + most + ")");
		// the request Redis admitted before the outage is not known here: the share is of the period's time left
		assertThat(most - least).isLessThanOrEqualTo(1);
		assertThat(admitted).isBetween(least, most);
		assertThat(admitted).isBetween(40L, 60L); // about half a day left of 100 here
		assertThat(denied).isNotNull();
		assertThat(denied.getResponseHeaders().getFirst("RateLimit")).isNull();
		long retryAfter = Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"));
		assertThat(retryAfter).isBetween(secondsUntilEnd(afterDenial), secondsUntilEnd(beforeDenial));
		assertThat(new String(denied.getResponseBody())).contains("\"violated-policies\":[\"free-quota-day\"]");
		assertThat(count("fallback-allowed") - allowedBefore).isEqualTo(admitted);
	}

	@Test
	void aCriticalQuotaRouteFailsClosedWithoutRedis() {
		double closedBefore = count("failed-closed");
		double allowedBefore = count("fallback-allowed");
		get("/quota-login/redis", "key-one").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-quota-login-day\";q=200;w=86400");
		redis.kill();
		for (int i = 0; i < 5; i++) {
			this.client.get().uri("/quota-login/" + i).header("X-API-Key", "key-one").exchange()
				.expectStatus().isEqualTo(503)
				.expectHeader().valueEquals("Retry-After", "1")
				.expectHeader().doesNotExist("RateLimit")
				.expectBody().jsonPath("$.type").isEqualTo(RateLimitProblems.TEMPORARY_REDUCED_CAPACITY);
		}
		assertThat(count("failed-closed") - closedBefore).isEqualTo(5);
		assertThat(count("fallback-allowed") - allowedBefore).isZero();
		// the same quota on a normal route is decided locally meanwhile
		get("/quota/0", "key-two").expectStatus().isOk();
		assertThat(count("fallback-allowed") - allowedBefore).isEqualTo(1);
	}

	/** This instance's share of the quota for a count starting at {@code epochMillis}: the documented formula. */
	private static long share(long epochMillis) {
		long start = dayStart(epochMillis);
		long length = 86_400_000L;
		return LIMIT * (start + length - epochMillis) / (INSTANCES * length);
	}

	/** Retry-After for a denial at {@code epochMillis}: whole seconds until the local midnight, rounded up. */
	private static long secondsUntilEnd(long epochMillis) {
		return (dayStart(epochMillis) + 86_400_000L - epochMillis + 999) / 1000;
	}

	private static long dayStart(long epochMillis) {
		LocalDate day = LocalDate.ofInstant(Instant.ofEpochMilli(epochMillis), ZONE);
		return day.atStartOfDay(ZONE).toInstant().toEpochMilli();
	}

	private static ZoneOffset noonNow() {
		long utcMinutes = (System.currentTimeMillis() / 60_000) % 1440;
		long offsetMinutes = Math.floorMod(720 - utcMinutes + 720, 1440) - 720; // -12:00 to +11:59
		return ZoneOffset.ofTotalSeconds((int) offsetMinutes * 60);
	}

	private double count(String outcome) {
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.DECISIONS).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private EntityExchangeResult<byte[]> exchange(String path) {
		return this.client.get().uri(path).header("X-API-Key", "key-one").exchange().expectBody().returnResult();
	}

}
