package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.lettuce.core.ClientOptions;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The limiter's Lettuce settings stay the limiter's: in a real gateway whose Redis is killed and restarted for real,
 * the application's own template (Spring Boot's {@code ReactiveStringRedisTemplate}, as Spring Session or a cache
 * would use it) keeps Boot's behaviour, its command queued while Redis is down and done once it is back, while the
 * limiter's check on its own client is refused at once and decided by the local fallback.
 *
 * <p>Both timeouts are long (30 s), so that only the clients' settings tell the two apart: a limiter check queued
 * like the application's command would wait past the test client's 10 s response timeout, and the application's
 * queued command outlives the outage.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "spring.data.redis.timeout=30s", "ratelimit.redis-timeout=30s" })
class ApplicationRedisClientRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	@Autowired
	private ReactiveStringRedisTemplate applicationTemplate;

	@Autowired
	private LettuceConnectionFactory applicationConnectionFactory;

	@Autowired
	private LimiterConnectionFactory limiterConnectionFactory;

	@Test
	void theApplicationsClientKeepsBootsSettingsAndTheLimitersHasItsOwn() {
		assertThat(this.applicationTemplate.getConnectionFactory()).isSameAs(this.applicationConnectionFactory);
		assertThat(disconnectedBehavior(this.applicationConnectionFactory))
			.isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
		assertThat(this.limiterConnectionFactory.isOwnClient()).isTrue();
		assertThat(disconnectedBehavior((LettuceConnectionFactory) this.limiterConnectionFactory.getConnectionFactory()))
			.isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
	}

	@Test
	void withRedisDownTheApplicationsCommandIsQueuedWhileTheLimitersCheckIsRefusedAtOnceAndFallsBack()
			throws Exception {
		// the application's connection is open, as in a gateway in service
		assertThat(this.applicationTemplate.opsForValue().set("app:session", "before").block(Duration.ofSeconds(10)))
			.isTrue();
		WebTestClient fresh = clientFrom("127.0.0.31");
		redis.kill();
		CompletableFuture<Boolean> queued;
		long checkMillis;
		EntityExchangeResult<byte[]> check;
		try {
			queued = this.applicationTemplate.opsForValue().set("app:session", "after").toFuture();
			long start = System.nanoTime();
			check = fresh.get().uri("/b/outage").exchange().expectBody().returnResult();
			checkMillis = (System.nanoTime() - start) / 1_000_000;
			// while Redis is down the application's command waits: neither done nor failed
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> !queued.isDone());
		}
		finally {
			redis.restart();
		}
		System.out.println("Redis killed: the limiter's check answered in " + checkMillis
				+ " ms (redis-timeout 30 s), the application's command queued");
		// decided by the local fallback (no RateLimit fields), long before the 30 s redis-timeout
		assertThat(check.getStatus().value()).isEqualTo(200);
		assertThat(check.getResponseHeaders().getFirst("RateLimit")).isNull();
		assertThat(checkMillis).isLessThan(5_000);
		// Redis is back: the application's queued command is sent and done
		assertThat(queued.get(30, TimeUnit.SECONDS)).isTrue();
		assertThat(redis.command("GET", "app:session")).isEqualTo("after");
	}

	private static ClientOptions.DisconnectedBehavior disconnectedBehavior(LettuceConnectionFactory factory) {
		return factory.getClientConfiguration().getClientOptions().orElseThrow().getDisconnectedBehavior();
	}

}
