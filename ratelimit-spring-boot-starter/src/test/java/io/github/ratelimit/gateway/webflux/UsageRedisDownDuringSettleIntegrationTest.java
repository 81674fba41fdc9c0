package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.test.redis.RedisServer;
import io.github.ratelimit.test.redis.TcpProxy;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Usage limits when Redis goes away, with a redis-server of this test's own reached through a {@link TcpProxy} (so
 * that Redis can become unreachable while it keeps its buckets) and a real upstream that reports usage
 * ({@link UsageUpstream}): a settlement that cannot reach Redis is logged once, not retried, and leaves the
 * reservation charged while the client still gets its whole answer; with Redis down from the start, a usage route is
 * decided by the local fallback in usage units (this instance's share: 2 instances configured, half of each limit),
 * its answers settled there.
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=300ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s", "ratelimit.fallback.instances=2",
		"ratelimit.fallback.learn-instances=false", "spring.data.redis.timeout=1s" })
class UsageRedisDownDuringSettleIntegrationTest extends SettleFailureRouteIntegrationTest {

	/** The gateway's Redis, of this class's own, stopped by its shutdown hook. */
	private static final RedisServer ownRedis = RedisServer.start();

	/** The network between the gateway and {@link #ownRedis}. */
	private static final TcpProxy network = TcpProxy.start(ownRedis.host(), ownRedis.port());

	@Autowired
	private DefaultLimiterChain chain;

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> "redis://" + network.host() + ":" + network.port());
	}

	/** Redis reachable again (restarted if a test killed it), decisions from it, empty buckets. */
	@Override
	protected void emptyBuckets() {
		network.restore();
		try {
			ownRedis.command("PING");
		}
		catch (RuntimeException ex) {
			ownRedis.restart(); // a previous test left it killed
		}
		awaitDecisionsFromRedis();
		ownRedis.flushAll();
		this.overLimitCache.clear();
	}

	@Test
	void aSettlementThatCannotReachRedisIsLoggedOnceNotRetriedAndLeavesTheReservationCharged(CapturedOutput output)
			throws Exception {
		// 7 events, one every 300 ms: the answer streams for about 2 s
		CompletableFuture<String> body = admittedChatStream("used=57&every=300");
		long cut = System.nanoTime();
		network.blackhole(); // Redis unreachable while the answer streams: nothing sent to it is answered
		try {
			// the client gets its whole answer, nothing waits for Redis
			assertThat(body.get(10, TimeUnit.SECONDS)).contains("\"total_tokens\":57").endsWith("data: [DONE]\n\n");
			System.out.println("Whole stream at the client " + (System.nanoTime() - cut) / 1_000_000
					+ " ms after Redis became unreachable (7 events, 300 ms apart)");
			// the settlement's call times out and is logged: the store waits RedisRateLimitStore.SETTLE_REPLY_WAIT
			// (10 s) for its reply
			await().atMost(Duration.ofSeconds(20)).until(() -> output.getOut().contains(SETTLE_FAILED));
		}
		finally {
			network.restore();
		}
		awaitDecisionsFromRedis();
		String bucket = bucketKey("key-one", "free", "chat");
		// not retried: the bucket keeps the reservation (300 of 1,000) charged, not the usage (57), for good (it
		// refills 0.28 a second: 720 after 70 s, where a settlement would have left 943)
		await().during(Duration.ofSeconds(2))
			.atMost(Duration.ofSeconds(10))
			.until(() -> StoredTokens.of(ownRedis::command, bucket, 1000, 1000, 3_600_000_000L),
					(tokens) -> tokens >= 699.9 && tokens < 720);
		assertThat(output.getOut().split(SETTLE_FAILED, -1)).as("logged once").hasSize(2);
		assertThat(output.getOut()).contains(SETTLE_FAILED + " (").contains("it stays charged as reserved");
	}

	@Test
	void withRedisDownTheLocalFallbackHoldsItsShareInUsageUnitsAndGivesBackWhatAnswersDidNotUse() {
		String key = "load-fallback-" + UUID.randomUUID();
		ownRedis.kill();
		// this instance's share: 500 of 1,000 tokens; two answers of 10 after reservations of 200 each
		for (int i = 0; i < 2; i++) {
			EntityExchangeResult<byte[]> small = fallback(key, 200, 10);
			assertThat(small.getStatus().value()).as("request %d", i).isEqualTo(200);
			assertThat(small.getResponseHeaders().getFirst("RateLimit")).as("decided locally").isNull();
		}
		// a third reservation of 200 fits only once the first two gave back what they did not use (100 left else)
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(fallback(key, 200, 10).getStatus().value()).isEqualTo(200));
		// 470 left once settled; an answer of 450 after a reservation of 200: 20 left
		assertThat(fallback(key, 200, 450).getStatus().value()).isEqualTo(200);
		// a reservation of 300 needs 280 more at this instance's 500 tokens per hour (7.2 s a token): 2,016 s
		// (216 s while the last answer is not settled: the await waits for its settlement)
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			EntityExchangeResult<byte[]> denied = fallback(key, 300, 1);
			assertThat(denied.getStatus().value()).isEqualTo(429);
			assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"))).isBetween(2000L, 2016L);
		});
		// what fits this instance's share still passes
		assertThat(fallback(key, 10, 1).getStatus().value()).isEqualTo(200);
	}

	/** A request on the fallback route reserving {@code reserve} tokens, its answer reporting {@code used}. */
	private EntityExchangeResult<byte[]> fallback(String key, long reserve, long used) {
		return this.client.get()
			.uri("/v1/header/fallback/x?used=" + used)
			.header("X-API-Key", key)
			.header("X-Reserve", Long.toString(reserve))
			.exchange()
			.expectBody()
			.returnResult();
	}

	/** Waits (at most 20 s) until the breaker is closed and a decision came from Redis. */
	private void awaitDecisionsFromRedis() {
		CircuitBreaker breaker = this.chain.circuitBreakers().breaker(StoreShards.SINGLE_SHARD);
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
			EntityExchangeResult<byte[]> probe = this.client.get()
				.uri("/probe/x")
				.header("X-API-Key", "key-two")
				.exchange()
				.expectBody()
				.returnResult();
			assertThat(probe.getResponseHeaders().getFirst("RateLimit")).isNotNull();
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		});
	}

}
