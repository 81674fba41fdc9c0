package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The store on a {@link LettuceScriptExecutor} (a Lettuce connection of its own), against a real redis-server
 * process: the connection is opened at creation off the caller's thread, a Redis that is down at start-up fails
 * checks (for the failure policy to handle) instead of hanging them, the executor connects once Redis is up, follows
 * a context stop and start, reloads the script after SCRIPT FLUSH and reconnects after a restart; a second set of
 * arguments (cost above 1) never changes the cached ones.
 */
class LettuceScriptExecutorTest {

	private final PlanLimits limits = new PlanLimits("free", "search",
			List.of(new LimitDefinition("free-search", 5, 5, Duration.ofMinutes(1))));

	private final ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, "hashed", "free");

	private RedisServer redis;

	private LettuceConnectionFactory connectionFactory;

	private RedisRateLimitStore limiter;

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.limiter = new RedisRateLimitStore(new LettuceScriptExecutor(this.connectionFactory),
				new BucketKeys("rl"));
	}

	@AfterEach
	void stop() {
		this.limiter.destroy();
		this.connectionFactory.destroy();
		this.redis.close();
	}

	@Test
	void redisDownAtStartUpFailsTheCheckThenTheLimiterConnectsOnceRedisIsUp() throws Exception {
		this.redis.stop();
		// a limiter created while Redis is down: its background connect fails, the first check retries and fails
		RedisRateLimitStore late = new RedisRateLimitStore(new LettuceScriptExecutor(this.connectionFactory),
				new BucketKeys("rl"));
		try {
			CompletableFuture<RateLimitDecision> first = late.tryConsume(this.client, this.limits, 1);
			assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
			this.redis.restart();
			await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
				RateLimitDecision decision = late.tryConsume(this.client, this.limits, 1).get(30, TimeUnit.SECONDS);
				assertThat(decision.allowed()).isTrue();
				assertThat(decision.source()).isEqualTo(RateLimitDecision.Source.SHARED);
			});
		}
		finally {
			late.destroy();
		}
		assertThat(this.redis.command("GET", "rl:{search|k:hashed}:0")).isNotNull();
	}

	@Test
	void theConnectionIsOpenedAtCreationNotByTheFirstCheck() {
		// the limiter of this test's set-up has opened its connection (redis-cli's own is the other client)
		await().atMost(Duration.ofSeconds(10)).until(() -> clientCount() >= 2);
		int before = clientCount();
		RedisRateLimitStore another = new RedisRateLimitStore(new LettuceScriptExecutor(this.connectionFactory),
				new BucketKeys("rl"));
		try {
			// one more client, without any check made through it
			await().atMost(Duration.ofSeconds(10)).until(() -> clientCount() == before + 1);
		}
		finally {
			another.destroy();
		}
	}

	private int clientCount() {
		String list = this.redis.command("CLIENT", "LIST");
		return (int) list.lines().filter((line) -> line.contains("addr=")).count();
	}

	@Test
	void aStoppedAndStartedContextGetsANewConnection() throws Exception {
		// what a context stop/start does (a paused test context, a checkpoint and restore): the limiter stops first,
		// the factory shuts its Lettuce client down, then the factory starts a new client and the limiter follows
		this.limiter.start();
		assertThat(this.limiter.getPhase()).isGreaterThan(this.connectionFactory.getPhase());
		assertThat(consume(1).allowed()).isTrue();
		this.limiter.stop();
		this.connectionFactory.stop();
		this.connectionFactory.start();
		this.limiter.start();
		assertThat(this.limiter.isRunning()).isTrue();
		RateLimitDecision decision = consume(1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.statuses().get(0).remaining()).isEqualTo(3);
	}

	@Test
	void scriptFlushedOrRedisRestartedTheCheckStillRuns() throws Exception {
		assertThat(consume(2).allowed()).isTrue();
		this.redis.command("SCRIPT", "FLUSH");
		RateLimitDecision afterFlush = consume(2);
		assertThat(afterFlush.allowed()).isTrue();
		assertThat(afterFlush.statuses().get(0).remaining()).isEqualTo(1);
		assertThat(this.redis.command("SCRIPT", "EXISTS", RedisRateLimitStore.rateLimitScript().getSha1()))
			.isEqualTo("1");
		this.redis.restart(); // empty again: no data, no scripts
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
			RateLimitDecision decision = consume(1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.statuses().get(0).remaining()).isEqualTo(4);
		});
	}

	@Test
	void costAboveOneLeavesTheCachedArgumentsAlone() throws Exception {
		assertThat(consume(4).statuses().get(0).remaining()).isEqualTo(1);
		RateLimitDecision denied = consume(2);
		assertThat(denied.allowed()).isFalse();
		assertThat(consume(1).allowed()).isTrue();
		assertThat(consume(1).allowed()).isFalse();
		assertThat(this.limiter.reset(this.client, this.limits).orTimeout(30, TimeUnit.SECONDS).join()).isEqualTo(1);
		assertThat(consume(5).allowed()).isTrue();
	}

	private RateLimitDecision consume(long cost) throws Exception {
		return this.limiter.tryConsume(this.client, this.limits, cost).get(30, TimeUnit.SECONDS);
	}

}
