package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis killed under a Server MVC gateway: normal routes fall back to the local limiter (answers without rate limit
 * fields, never a 5xx), critical routes fail closed with 503, {@code Retry-After} and a problem body; once Redis is
 * back, decisions come from it again. Uses the redis-server process of the own-Redis tests, killed and restarted for real.
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=200ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class ServerMvcRedisOutageIntegrationTest extends ServerMvcOwnRedisIntegrationTest {

	@Test
	void normalRoutesFallBackCriticalRoutesFailClosedAndRedisDecidesAgainOnceBack() {
		HttpResponse<String> before = get("/a/1", "X-API-Key", "key-one");
		assertThat(before.statusCode()).isEqualTo(200);
		assertThat(before.headers().firstValue("RateLimit")).isPresent();
		ownRedis.kill();
		try {
			HttpResponse<String> fallback = get("/a/2", "X-API-Key", "key-two");
			assertThat(fallback.statusCode()).isEqualTo(200);
			assertThat(fallback.headers().firstValue("RateLimit")).isEmpty();
			assertThat(fallback.body()).isEqualTo("upstream");
			HttpResponse<String> login = send("POST", "/auth/login");
			assertThat(login.statusCode()).isEqualTo(503);
			assertThat(login.headers().firstValue("Retry-After")).contains("1");
			assertThat(login.headers().firstValue("Content-Type")).contains("application/problem+json");
			assertThat(login.body()).isEqualTo("{\"type\":\"" + RateLimitProblems.TEMPORARY_REDUCED_CAPACITY
					+ "\",\"title\":\"Temporarily reduced capacity\",\"status\":503,"
					+ "\"detail\":\"The rate limiter is unavailable and this route fails closed; retry later.\","
					+ "\"instance\":\"/auth/login\"}");
			for (int i = 3; i < 8; i++) { // the breaker opens: fallback decisions, still no 5xx on normal routes
				assertThat(get("/a/" + i, "X-API-Key", "key-two").statusCode()).isIn(200, 429);
			}
		}
		finally {
			ownRedis.restart();
		}
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> get("/multi/1", "X-API-Key", "key-one").headers().firstValue("RateLimit").isPresent());
		assertThat(send("POST", "/auth/login").statusCode()).isEqualTo(200);
	}

}
