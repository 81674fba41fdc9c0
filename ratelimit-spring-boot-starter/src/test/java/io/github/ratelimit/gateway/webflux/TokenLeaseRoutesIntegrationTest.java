package io.github.ratelimit.gateway.webflux;

import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Token leases through real HTTP into a real gateway with real Redis (group {@code leased} of
 * {@code application-gateway-it.yml}: 50 tokens refilled 1 per hour, leases of up to 20%): most requests of a busy
 * client are decided from leases, every response carries the exact remaining count, and the first denial is Redis'
 * own with its exact Retry-After.
 */
@ActiveProfiles("gateway-it")
class TokenLeaseRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Test
	void aBusyClientIsMostlyDecidedFromLeasesWithExactFieldsAndRedisDeniesExactly() {
		double leasedBefore = checks("lease");
		double redisBefore = checks("redis");
		List<String> fields = new ArrayList<>();
		long start = System.nanoTime();
		for (int i = 0; i < 50; i++) {
			fields.add(get("/leased/" + i, "key-one").expectStatus().isOk().returnResult(Void.class)
				.getResponseHeaders().getFirst("RateLimit"));
		}
		List<String> expected = new ArrayList<>();
		for (int i = 49; i >= 0; i--) {
			expected.add("\"free-leased\";r=" + i + ";t=" + ((50 - i) * 3600));
		}
		// remaining counts down by one per request, whether Redis or a lease decided
		assertThat(fields).extracting((field) -> field.substring(0, field.indexOf(";t=")))
			.containsExactlyElementsOf(expected.stream().map((field) -> field.substring(0, field.indexOf(";t="))).toList());
		double leased = checks("lease") - leasedBefore;
		double fromRedis = checks("redis") - redisBefore;
		assertThat(leased + fromRedis).isEqualTo(50);
		assertThat(leased).as("decided from leases").isGreaterThan(25);
		// the 51st: Redis' denial, exact (one token per hour, less the whole seconds since the first token was
		// taken: a slow machine may take seconds over these requests), never a lease's
		HttpHeaders denial = get("/leased/51", "key-one").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.returnResult(Void.class)
			.getResponseHeaders();
		long elapsed = (System.nanoTime() - start) / 1_000_000_000L + 1;
		assertThat(Long.parseLong(denial.getFirst("Retry-After"))).isBetween(3600 - elapsed, 3600L);
		String field = denial.getFirst("RateLimit");
		assertThat(field).startsWith("\"free-leased\";r=0;t=");
		assertThat(Long.parseLong(field.substring(field.indexOf(";t=") + 3))).isBetween(180_000 - elapsed, 180_000L);
		// another client has its own bucket and its own lease
		get("/leased/x", "key-two").expectStatus().isOk().expectHeader().valueEquals("RateLimit",
				"\"free-leased\";r=49;t=3600");
	}

	private double checks(String source) {
		Timer timer = this.meters.find("ratelimit.check.duration").tag("source", source).timer();
		return (timer != null) ? timer.count() : 0;
	}

}
