package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static io.github.ratelimit.gateway.webflux.ConcurrencyRoutesIntegrationTest.done;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A concurrency limit while Redis is unavailable (profile {@code concurrency-it}, group {@code reports}: 3 in flight),
 * through a real gateway on a redis-server of its own that the test pauses (SIGSTOP), with a real upstream that counts
 * the work it has in flight ({@link HeldUpstream}). The requests Redis admitted count against the local fallback's
 * share, so the client never has more than 3 requests at the upstream, whoever decided.
 */
@ActiveProfiles("concurrency-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=200ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class ConcurrencyRedisOutageRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	private static final HeldUpstream held = new HeldUpstream();

	@DynamicPropertySource
	static void upstreams(DynamicPropertyRegistry registry) {
		registry.add("held-upstream.uri", held::uri);
		registry.add("cut-off-upstream.uri", held::uri);
	}

	@AfterEach
	void letEveryRequestGo() {
		held.releaseAll();
	}

	@AfterAll
	static void stopUpstream() {
		held.close();
	}

	/** Waits until a decision came from Redis (its {@code RateLimit} field is sent), then empties the buckets. */
	@Override
	protected void awaitDecisionsFromRedis() {
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
			redis.flushAll();
			this.overLimitCache.clear();
			assertThat(ConcurrencyRoutesIntegrationTest.get(this.port, "/reports/error/probe", "load-probe")
				.join()
				.getHeaders()
				.getFirst("RateLimit"))
				.isNotNull();
		});
		redis.flushAll();
		this.overLimitCache.clear();
	}

	@Test
	void whileRedisIsPausedTheFallbackAdmitsNothingOnTopOfTheRequestsRedisAdmitted() {
		String key = "load-outage-" + UUID.randomUUID();
		held.resetMost();
		List<CompletableFuture<ResponseEntity<String>>> admitted = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			admitted.add(ConcurrencyRoutesIntegrationTest.get(this.port, "/reports/hold/" + i, key));
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> held.inFlight() == 3);
		redis.pause();
		try {
			int before = held.received();
			List<CompletableFuture<ResponseEntity<String>>> during = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				during.add(ConcurrencyRoutesIntegrationTest.get(this.port, "/reports/hold/during-" + i, key));
			}
			// each request either reached the upstream or was answered by the gateway
			await().atMost(Duration.ofSeconds(30)).until(() -> held.received() - before + done(during).size() == 6);
			assertThat(held.mostInFlight()).as("most requests of the client the upstream worked on at once")
				.isLessThanOrEqualTo(3);
			assertThat(done(during)).hasSize(6).allSatisfy((denied) -> {
				assertThat(denied.getStatusCode().value()).isEqualTo(429);
				assertThat(denied.getHeaders().getFirst("RateLimit")).as("a fallback decision").isNull();
			});

			// the three finish (their release cannot reach Redis): the fallback admits the client again
			held.releaseAll();
			await().atMost(Duration.ofSeconds(10)).until(() -> done(admitted).size() == 3);
			assertThat(done(admitted)).allSatisfy((a) -> assertThat(a.getStatusCode().value()).isEqualTo(200));
			CompletableFuture<ResponseEntity<String>> again = ConcurrencyRoutesIntegrationTest.get(this.port,
					"/reports/hold/again", key);
			await().atMost(Duration.ofSeconds(10)).until(() -> held.inFlight() == 1);
			held.releaseAll();
			ResponseEntity<String> answer = again.join();
			assertThat(answer.getStatusCode().value()).isEqualTo(200);
			assertThat(answer.getHeaders().getFirst("RateLimit")).as("a fallback decision").isNull();
			assertThat(held.mostInFlight()).isLessThanOrEqualTo(3);
		}
		finally {
			redis.resume();
		}
	}

}
