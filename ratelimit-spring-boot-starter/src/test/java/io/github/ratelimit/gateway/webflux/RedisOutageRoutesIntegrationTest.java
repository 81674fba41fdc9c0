package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.gateway.webflux.ProblemDetailResponseWriter;
import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis error or timeout never hangs a request or turns into a 5xx on normal routes: they fall back to the local
 * limiter; critical routes fail closed with 503. Decisions come from Redis again once it is back, even with its
 * script cache gone. Uses its own redis-server process, killed, paused (SIGSTOP) and restarted for real.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=200ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class RedisOutageRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	@Test
	void pausedRedisTimesOutIntoTheFallbackThenTheBreakerOpensAndItRecovers() {
		// SIGSTOP: connections stay open and hang, the nastier case
		WebTestClient fresh = clientFrom("127.0.0.22");
		List<Long> millis = new ArrayList<>();
		redis.pause();
		long resumed;
		try {
			for (int i = 0; i < 12; i++) {
				long start = System.nanoTime();
				EntityExchangeResult<byte[]> result = get(fresh, "/multi/" + i);
				long end = System.nanoTime();
				millis.add((end - start - stalls.stalledNanos(start, end)) / 1_000_000);
				assertThat(result.getStatus().value()).isIn(200, 429);
				assertThat(result.getResponseHeaders().getFirst("RateLimit")).isNull();
			}
		}
		finally {
			redis.resume();
			resumed = System.nanoTime();
		}
		System.out.println("Redis paused (SIGSTOP), redis-timeout 200 ms, 12 sequential requests, ms each (less the"
				+ " time the machine stood still): " + millis);
		assertThat(millis.subList(0, 5)).allSatisfy((ms) -> assertThat(ms).isLessThan(1_000));
		List<Long> afterOpen = new ArrayList<>(millis.subList(6, 12));
		afterOpen.sort(null);
		assertThat(afterOpen.get(3)).as("median once the breaker is open, of %s", millis).isLessThan(50);
		// within the breaker's wait (1 s) plus a second, decisions come from Redis again (less the machine's stalls)
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
			.untilAsserted(() -> assertThat(get("/b/probe").getResponseHeaders().getFirst("RateLimit")).isNotNull());
		long back = System.nanoTime();
		long stalled = stalls.stalledNanos(resumed, back);
		System.out.println("Decisions from Redis again " + (back - resumed) / 1_000_000
				+ " ms after SIGCONT (breaker wait 1 s; the machine stood still " + stalled / 1_000_000 + " ms)");
		assertThat(back - resumed - stalled).as("ns to decisions from Redis after SIGCONT, less stalls")
			.isLessThanOrEqualTo(Duration.ofSeconds(2).toNanos());
	}

	@Test
	void checksAbandonedWhileRedisHungTakeNothingWhenItRunsThem() {
		WebTestClient fresh = clientFrom("127.0.0.23");
		String bucket = "rl:{a|k:" + io.github.ratelimit.gateway.client.ApiKeyHasher.hash("key-two") + "}:0";
		redis.pause();
		try {
			for (int i = 0; i < 2; i++) {
				assertThat(fresh.get().uri("/a/" + i).header("X-API-Key", "key-two").exchange().expectBody()
					.returnResult().getStatus().value()).isEqualTo(200); // decided by the local fallback
			}
		}
		finally {
			redis.resume();
		}
		// Redis now runs the two queued checks past their deadline: the script refuses them, nothing is taken (a check
		// Redis ran in time would be refunded when its answer came)
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
			.untilAsserted(() -> assertThat(get("/b/probe").getResponseHeaders().getFirst("RateLimit")).isNotNull());
		assertThat(StoredTokens.of(redis::command, bucket, 2, 1, 60_000_000)).isGreaterThan(1.9);
	}

	@Test
	void killedRedisFallsBackLocallyAndCriticalRoutesFailClosed() {
		redis.kill();
		// normal route: the local fallback holds this instance's share (1 instance: the whole anonymous capacity 2);
		// a client address of its own, so no other test's fallback bucket interferes
		WebTestClient fresh = clientFrom("127.0.0.21");
		assertThat(get(fresh, "/b/1").getStatus().value()).isEqualTo(200);
		assertThat(get(fresh, "/b/2").getStatus().value()).isEqualTo(200);
		EntityExchangeResult<byte[]> third = get(fresh, "/b/3");
		assertThat(third.getStatus().value()).isEqualTo(429);
		assertThat(third.getResponseHeaders().getFirst("Retry-After")).isNotNull();
		// critical route: 503 with Retry-After and a problem body, never 429
		this.client.get().uri("/auth/login").exchange()
			.expectStatus().isEqualTo(503)
			.expectHeader().valueEquals("Retry-After", "1")
			.expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody().jsonPath("$.type").isEqualTo(RateLimitProblems.TEMPORARY_REDUCED_CAPACITY);
		redis.restart(); // empty: no buckets, no cached script (EVALSHA answers NOSCRIPT, EVAL follows)
		awaitDecisionsFromRedis();
		// a fresh shared bucket: anonymous capacity 2
		assertThat(get("/b/x").getResponseHeaders().getFirst("RateLimit")).isEqualTo("\"anonymous-b\";r=1;t=60");
		assertThat(get("/b/y").getStatus().value()).isEqualTo(200);
		assertThat(get("/b/z").getStatus().value()).isEqualTo(429);
		this.client.get().uri("/auth/login").exchange().expectStatus().isOk();
	}

	private EntityExchangeResult<byte[]> get(String path) {
		return get(this.client, path);
	}

	private static EntityExchangeResult<byte[]> get(WebTestClient client, String path) {
		return client.get().uri(path).exchange().expectBody().returnResult();
	}

}
