package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.RedisServer;
import io.github.ratelimit.test.redis.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Case from public bug reports: Redis unreachable through a blackhole (connections accepted, never answered),
 * timeout 100 ms, 20 sequential requests: the first few take about the timeout, then the breaker opens and the
 * rest add almost nothing; after the network heals, decisions come from Redis again.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=100ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class RedisBlackholeRoutesIntegrationTest extends BaseRouteIntegrationTest {

	/** A Redis of its own, behind a proxy that blackholes it (instead of the shared test Redis). */
	private static final RedisServer redis = RedisServer.start();

	private static final TcpProxy network = TcpProxy.start(redis.host(), redis.port());

	/** The time the test JVM stood still: left out of the request times asserted below. */
	private static final MachineStalls stalls = MachineStalls.meter();

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> "redis://" + network.host() + ":" + network.port());
	}

	@AfterAll
	static void stop() {
		network.close();
		redis.close();
	}

	@Override
	protected void emptyBuckets() {
		// one test: it starts from the fresh Redis of this class
	}

	@Test
	void blackholedRedisCostsAboutTheTimeoutUntilTheBreakerOpensThenNearlyNothing() {
		WebTestClient client = clientFrom("127.0.0.1");
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(get(client, "/b/warm").getResponseHeaders().getFirst("RateLimit")).isNotNull());
		network.blackhole();
		List<Long> millis = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			long start = System.nanoTime();
			EntityExchangeResult<byte[]> result = get(client, "/b/" + i);
			long end = System.nanoTime();
			millis.add((end - start - stalls.stalledNanos(start, end)) / 1_000_000);
			assertThat(result.getStatus().value()).isIn(200, 429);
		}
		System.out.println("Blackhole, redis-timeout 100 ms, 20 sequential requests, ms each (less stalls): " + millis);
		assertThat(millis.subList(0, 5)).allSatisfy((ms) -> assertThat(ms).isLessThan(600));
		List<Long> afterOpen = new ArrayList<>(millis.subList(10, 20));
		afterOpen.sort(null);
		assertThat(afterOpen.get(5)).as("median once the breaker is open, of %s", millis).isLessThan(30);

		long healed = System.nanoTime();
		network.restore();
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
			.untilAsserted(() -> assertThat(get(client, "/multi/probe").getResponseHeaders().getFirst("RateLimit")).isNotNull());
		System.out.println("Decisions from Redis again " + (System.nanoTime() - healed) / 1_000_000
				+ " ms after the network healed (breaker wait 1 s)");
	}

	private static EntityExchangeResult<byte[]> get(WebTestClient client, String path) {
		return client.get().uri(path).exchange().expectBody().returnResult();
	}

}
