package io.github.ratelimit.gateway.filter;

import java.time.Duration;

import io.github.ratelimit.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis error or timeout never hangs or fails a request: it is let through (without rate limit fields) within
 * about {@code ratelimit.redis-timeout}, and limiting resumes when Redis is back, even with its script cache gone.
 * Uses its own redis-server process, killed and paused for real.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.profiles.active=gateway-it", "ratelimit.redis-timeout=200ms" })
class RedisFailureIntegrationTest {

	private static final RedisServer redis = RedisServer.start();

	@LocalServerPort
	int port;

	WebTestClient client;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@BeforeEach
	void setUp() {
		this.client = GatewayTestSupport.clientFrom("127.0.0.1", this.port);
		redis.flushAll();
		awaitDecisionsFromRedis();
	}

	@Test
	void pausedRedisTimesOutAndLetsRequestsThrough() {
		redis.pause();
		try {
			for (int i = 0; i < 3; i++) {
				long start = System.nanoTime();
				EntityExchangeResult<byte[]> result = get("/b/" + i);
				long millis = (System.nanoTime() - start) / 1_000_000;
				assertThat(result.getStatus().value()).isEqualTo(200);
				assertThat(result.getResponseHeaders().getFirst("RateLimit")).isNull();
				assertThat(millis).as("request %d took %d ms", i, millis).isLessThan(1_500);
			}
		}
		finally {
			redis.resume();
		}
		awaitDecisionsFromRedis();
	}

	@Test
	void killedRedisLetsRequestsThroughAndRestartedRedisWithoutScriptsLimitsAgain() {
		redis.kill();
		for (int i = 0; i < 3; i++) {
			long start = System.nanoTime();
			EntityExchangeResult<byte[]> result = get("/b/" + i);
			long millis = (System.nanoTime() - start) / 1_000_000;
			assertThat(result.getStatus().value()).isEqualTo(200);
			assertThat(millis).as("request %d took %d ms", i, millis).isLessThan(1_500);
		}
		redis.restart(); // empty: no buckets, no cached script (EVALSHA answers NOSCRIPT, EVAL follows)
		awaitDecisionsFromRedis();
		// a fresh bucket: anonymous capacity 2, the awaited request took 1
		assertThat(get("/b/x").getResponseHeaders().getFirst("RateLimit")).isEqualTo("\"anonymous-b\";r=0;t=120");
		assertThat(get("/b/y").getStatus().value()).isEqualTo(429);
	}

	private void awaitDecisionsFromRedis() {
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
			redis.flushAll();
			assertThat(get("/b/probe").getResponseHeaders().getFirst("RateLimit")).isNotNull();
		});
	}

	private EntityExchangeResult<byte[]> get(String path) {
		return this.client.get().uri(path).exchange().expectBody().returnResult();
	}

}
