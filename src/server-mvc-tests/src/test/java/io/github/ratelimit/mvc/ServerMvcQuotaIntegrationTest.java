package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A calendar quota through a real Gateway Server MVC: the same fields, Retry-After and problem body as on WebFlux.
 * Group {@code a} of plan {@code free} is a quota of 2 a day here, in a fixed-offset zone whose local noon is when
 * the class was loaded (the day ends 12 hours away, so it does not reset during the test).
 */
class ServerMvcQuotaIntegrationTest extends ServerMvcRouteIntegrationTest {

	/** Plan free's zone: local noon when the class was loaded. */
	private static final ZoneOffset ZONE = noonNow();

	@DynamicPropertySource
	static void quota(DynamicPropertyRegistry registry) {
		registry.add("ratelimit.plans.free.quota-zone", ZONE::getId);
		registry.add("ratelimit.plans.free.groups.a[0].type", () -> "quota");
		registry.add("ratelimit.plans.free.groups.a[0].limit", () -> "2");
		registry.add("ratelimit.plans.free.groups.a[0].period", () -> "day");
	}

	@Test
	void aQuotasFieldsAnd429AreTheSameAsOnWebFlux() {
		QuotaPeriod day = QuotaPeriod.of(QuotaPeriodUnit.DAY, ZONE);
		for (int i = 1; i <= 2; i++) {
			Instant before = Instant.now();
			HttpResponse<String> admitted = get("/a/" + i, "X-API-Key", "key-one");
			Instant after = Instant.now();
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit-Policy")).contains("\"free-a-day\";q=2;w=86400");
			String field = admitted.headers().firstValue("RateLimit").orElseThrow();
			assertThat(field).startsWith("\"free-a-day\";r=" + (2 - i) + ";t=");
			assertWithinASecondOf(Long.parseLong(field.substring(field.indexOf(";t=") + 3)), day, before, after);
		}
		Instant before = Instant.now();
		HttpResponse<String> denied = get("/a/3", "X-API-Key", "key-one");
		Instant after = Instant.now();
		assertThat(denied.statusCode()).isEqualTo(429);
		String retryAfter = denied.headers().firstValue("Retry-After").orElseThrow();
		assertWithinASecondOf(Long.parseLong(retryAfter), day, before, after);
		assertThat(denied.headers().firstValue("RateLimit-Policy")).contains("\"free-a-day\";q=2;w=86400");
		String field = denied.headers().firstValue("RateLimit").orElseThrow();
		assertThat(field).startsWith("\"free-a-day\";r=0;t=");
		assertWithinASecondOf(Long.parseLong(field.substring(field.indexOf(";t=") + 3)), day, before, after);
		assertThat(denied.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(denied.body()).isEqualTo("{\"type\":\"" + RateLimitProblems.QUOTA_EXCEEDED + "\","
				+ "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,"
				+ "\"detail\":\"Quota exceeded for free-a-day; retry after " + retryAfter + " s.\",\"instance\":\"/a/3\","
				+ "\"violated-policies\":[\"free-a-day\"]}");
		assertThat(upstream.received()).containsExactly("/a/1", "/a/2");
	}

	/** Within a second of what QuotaPeriod gives between two instants, rounded up as the fields are. */
	private static void assertWithinASecondOf(long seconds, QuotaPeriod period, Instant before, Instant after) {
		long atMost = ceilSeconds(period.untilEnd(before));
		long atLeast = ceilSeconds(period.untilEnd(after));
		assertThat(seconds).isBetween(atLeast - 1, atMost + 1);
	}

	private static long ceilSeconds(Duration duration) {
		return (duration.toNanos() + 999_999_999L) / 1_000_000_000L;
	}

	/** The fixed offset in [-12:00, +12:00) whose local time is noon now. */
	private static ZoneOffset noonNow() {
		long offset = Math.floorMod(43_200 - Instant.now().getEpochSecond(), 86_400L);
		return ZoneOffset.ofTotalSeconds((int) ((offset >= 43_200) ? offset - 86_400 : offset));
	}

}
