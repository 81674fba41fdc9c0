package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Window algorithms on whole routes, through real HTTP into a real gateway with a real Redis: a sliding window log
 * slides (a request leaves the window exactly one window after it was admitted, and Retry-After says when), and a
 * list mixing algorithms is all-or-nothing.
 */
@ActiveProfiles("algorithms-it")
class AlgorithmRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Test
	void slidingWindowLogFreesEachRequestsSlotOneWindowAfterIt() {
		// 3 per 2 s: one request at t0, two at t0 + 1 s; the 4th waits for t0's slot only (Retry-After 1), not for
		// a window edge
		get("/log/1").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-log\";q=3;w=2")
			.expectHeader().valueEquals("RateLimit", "\"free-log\";r=2;t=2");
		letTimePass(Duration.ofSeconds(1));
		get("/log/2").expectStatus().isOk();
		get("/log/3").expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"free-log\";r=0;t=2");
		get("/log/4").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueEquals("Retry-After", "1")
			.expectBody().jsonPath("$.violated-policies[0]").isEqualTo("free-log");
		letTimePass(Duration.ofSeconds(1)); // the client waits exactly Retry-After
		get("/log/5").expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"free-log\";r=0;t=2");
		// the two requests of t0 + 1 s still fill the window
		get("/log/6").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader().valueEquals("Retry-After", "1");
		assertThat(redis.command("ZCARD", "rl:{log|k:" + io.github.ratelimit.gateway.client.ApiKeyHasher.hash("key-one")
				+ "}:0:swl")).isEqualTo("3");
	}

	@Test
	void mixedAlgorithmsOnOneRouteAreAllOrNothing() {
		String first = get("/mixed/1").expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy",
					"\"free-mixed-30s\";q=2;w=30, \"free-mixed-1h\";q=100;w=3600, \"free-mixed-1m\";q=50;w=60")
			.returnResult(String.class).getResponseHeaders().getFirst("RateLimit");
		assertThat(remaining(first, "free-mixed-1h")).isEqualTo(99);
		get("/mixed/2").expectStatus().isOk();
		for (int i = 3; i <= 5; i++) {
			String denied = get("/mixed/" + i).expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
				.expectBody().jsonPath("$.violated-policies.length()").isEqualTo(1)
				.jsonPath("$.violated-policies[0]").isEqualTo("free-mixed-30s")
				.returnResult().getResponseHeaders().getFirst("RateLimit");
			// the denials took nothing from the fixed window nor the sliding counter
			assertThat(remaining(denied, "free-mixed-30s")).isZero();
			assertThat(remaining(denied, "free-mixed-1h")).isEqualTo(98);
			assertThat(remaining(denied, "free-mixed-1m")).isEqualTo(48);
		}
	}

	private WebTestClient.ResponseSpec get(String path) {
		return this.client.get().uri(path).header("X-API-Key", "key-one").exchange();
	}

	private static long remaining(String rateLimitField, String policy) {
		Matcher matcher = Pattern.compile("\"" + Pattern.quote(policy) + "\";r=(\\d+);t=\\d+").matcher(rateLimitField);
		assertThat(matcher.find()).as("%s in %s", policy, rateLimitField).isTrue();
		return Long.parseLong(matcher.group(1));
	}

}
