package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What the migration guide tells of Gateway's {@code RedisRateLimiter} when Redis is gone: the guide's "before"
 * configuration with Redis at a port nothing listens on lets every request through, with
 * {@code X-RateLimit-Remaining: -1}.
 */
@SpringBootTest(classes = MigrationGuideBeforeTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GatewayRequestRateLimiterRedisDownRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@DynamicPropertySource
	static void guideConfigurationWithoutRedis(DynamicPropertyRegistry registry) {
		Map<String, Object> properties = MigrationGuide.properties("before", upstream.uri());
		properties.put("ratelimit.plans.anonymous.default[0].capacity", "1");
		properties.put("ratelimit.plans.anonymous.default[0].refill-tokens", "1");
		properties.put("ratelimit.plans.anonymous.default[0].refill-period", "1s");
		properties.put("spring.data.redis.url", "redis://127.0.0.1:" + closedPort());
		properties.forEach((name, value) -> registry.add(name, () -> value));
	}

	@Override
	protected void emptyBuckets() {
		// no Redis to empty
	}

	@Test
	void everyRequestIsLetThroughWithRemainingMinusOne() {
		for (int i = 1; i <= 25; i++) { // more than the burst capacity of 20
			get("/api/search/q", "key-of-client-a").expectStatus().isOk()
				.expectHeader().valueEquals("X-RateLimit-Remaining", "-1");
		}
	}

	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
