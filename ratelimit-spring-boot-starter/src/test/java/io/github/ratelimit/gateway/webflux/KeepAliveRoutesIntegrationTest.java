package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import io.github.ratelimit.test.KeepAliveConnection;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every request on a keep-alive connection is answered when the limiter's decisions mix: some come from Redis
 * (asynchronous, answered from a Lettuce thread) and some from the over-limit cache (synchronous, answered on the
 * connection's own event loop thread). A request answered synchronously while the server still had an asynchronous
 * one in progress on the same connection used to stop the connection's reads (reactor-netty issue #4361, fixed in
 * Reactor Netty 1.3.8): the next request was never read, and never answered. See src/docs/reports/keep-alive-report.md.
 */
@ActiveProfiles("gateway-it")
class KeepAliveRoutesIntegrationTest extends BaseRouteIntegrationTest {

	/** Above the gateway's redis-timeout (5 s in these tests), so a slow decision is not taken for a lost one. */
	private static final Duration READ_TIMEOUT = Duration.ofSeconds(15);

	@Test
	void everyRequestIsAnsweredWhenDecisionsFromRedisAndFromTheOverLimitCacheMix() {
		// key-two's bucket of group a (2 per minute) drained: the denial is then remembered by the over-limit cache
		get("/a/1", "key-two").expectStatus().isOk();
		get("/a/2", "key-two").expectStatus().isOk();
		get("/a/3", "key-two").expectStatus().isEqualTo(429);
		try (KeepAliveConnection connection = new KeepAliveConnection(this.port, READ_TIMEOUT)) {
			String admitted = connection.get("/fast/x", "X-API-Key: key-one");
			String denied = connection.get("/a/x", "X-API-Key: key-two");
			for (int round = 0; round < 200; round++) {
				// decided by Redis (group fast: 2000 a second), then by the cache while the first is in progress
				connection.send(admitted, denied);
				assertThat(connection.readStatus()).as("answer to the admitted request of round %d", round)
					.isEqualTo(200);
				assertThat(connection.readStatus()).as("answer to the denied request of round %d", round)
					.isEqualTo(429);
			}
		}
	}

}
