package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.SettleReplyWait;
import io.github.ratelimit.gateway.redis.ShardClockReadings;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.test.redis.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A settlement whose reply does not come within the store's wait, over a redis-server of this test's own that is
 * paused (SIGSTOP) while the settle is queued in it: the gateway counts the settlement as failed (the reservation
 * stays charged), and when Redis resumes and runs the queued settle past its deadline, the script refuses it, so the
 * bucket in Redis holds exactly the reservation and the meters tell the truth (charged: the reservation; forgiven:
 * the rest of what the answer reported). The store's wait is lowered from 10 s to 2 s to keep the test short.
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=300ms", "spring.data.redis.timeout=1s" })
class UsageSettlePastDeadlineIntegrationTest extends SettleFailureRouteIntegrationTest {

	private static final Duration SETTLE_WAIT = Duration.ofSeconds(2);

	/** The gateway's Redis, of this class's own (paused by the test), stopped by its shutdown hook. */
	private static final RedisServer ownRedis = RedisServer.start();

	@Autowired
	private RedisRateLimitStore store;

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> "redis://" + ownRedis.host() + ":" + ownRedis.port());
	}

	@Override
	protected void emptyBuckets() {
		ownRedis.resume();
		ownRedis.flushAll();
		this.overLimitCache.clear();
	}

	@Test
	void aSettlementRedisRunsAfterTheGatewayGaveUpOnItChangesNothingAndTheMetersSaySo(CapturedOutput output)
			throws Exception {
		SettleReplyWait.set(this.store, SETTLE_WAIT);
		// the settle's deadline is sent only once the shard's clock has been read
		await().atMost(Duration.ofSeconds(5))
			.until(() -> ShardClockReadings.nowInEachShard(this.store).values().stream().allMatch((now) -> now > 0));
		double charged = counter(MicrometerRateLimitMetrics.USAGE_CHARGED);
		double reported = counter(MicrometerRateLimitMetrics.USAGE_REPORTED);
		double forgiven = counter(MicrometerRateLimitMetrics.USAGE_FORGIVEN);
		// reserves 300, reports 900; 7 events, one every 100 ms
		CompletableFuture<String> body = admittedChatStream("used=900&every=100");
		ownRedis.pause(); // the settlement, sent when the answer ends, waits in Redis' socket
		try {
			assertThat(body.get(10, TimeUnit.SECONDS)).contains("\"total_tokens\":900").endsWith("data: [DONE]\n\n");
			// the store gives up on the settle's reply after SETTLE_WAIT (before the fix: the client's 10 s)
			await().atMost(Duration.ofSeconds(15)).until(() -> output.getOut().contains(SETTLE_FAILED));
		}
		finally {
			ownRedis.resume(); // Redis runs the queued settle now, past its deadline
		}
		String bucket = bucketKey("key-one", "free", "chat");
		// the reservation (300 of 1,000) stays charged, not the usage (900): 700 left, refilling 0.28 a second
		await().during(Duration.ofSeconds(1))
			.atMost(Duration.ofSeconds(5))
			.until(() -> StoredTokens.of(ownRedis::command, bucket, 1000, 1000, 3_600_000_000L),
					(tokens) -> tokens >= 699.9 && tokens < 710);
		assertThat(counter(MicrometerRateLimitMetrics.USAGE_REPORTED) - reported).as("reported").isEqualTo(900);
		assertThat(counter(MicrometerRateLimitMetrics.USAGE_CHARGED) - charged).as("charged: the reservation")
			.isEqualTo(300);
		assertThat(counter(MicrometerRateLimitMetrics.USAGE_FORGIVEN) - forgiven).as("forgiven: the rest")
			.isEqualTo(600);
	}

	private double counter(String name) {
		return UsageLoad.sum(List.of(this.meters), name, "chat");
	}

}
