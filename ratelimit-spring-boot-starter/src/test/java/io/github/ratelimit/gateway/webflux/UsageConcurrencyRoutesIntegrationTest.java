package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.properties.LimitResolver;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A route whose group has a concurrency limit and a usage limit (route {@code reports}: at most 2 in flight, 1,000
 * tokens per hour, 100 reserved per request), through the real gateway, a real upstream that reports usage
 * ({@link UsageUpstream}) and real Redis: the requests that take a slot reserve their estimate in the same check, and
 * once their answers are over the same requests give their slots back and are charged what they used (an upstream
 * error answer too); a request whose upstream closed the connection without answering keeps its slot, by the rule of
 * {@link SlotReleaseWebFilter}, and is charged its reservation.
 */
@ActiveProfiles("usage-bounds-it")
class UsageConcurrencyRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	@Autowired
	private RateLimitStore store;

	@Autowired
	private LimitResolver limits;

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@Test
	void theRequestsHoldingSlotsGiveThemBackAndAreChargedTheirUsage() {
		String key = "load-cc-usage-" + UUID.randomUUID();
		int inFlightBefore = usageUpstream.inFlight();
		List<CompletableFuture<ResponseEntity<String>>> held = new ArrayList<>();
		held.add(ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/1?used=30&delay=1500", key));
		held.add(ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/2?used=250&delay=1500", key));
		await().atMost(Duration.ofSeconds(10)).until(() -> usageUpstream.inFlight() - inFlightBefore == 2);
		// both slots taken, 200 tokens reserved
		assertThat(slotsTaken()).isEqualTo(2);
		assertThat(usage(key).remaining()).isEqualTo(800);
		ResponseEntity<String> third = ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/3?used=1",
				key)
			.join();
		assertThat(third.getStatusCode().value()).isEqualTo(429);
		assertThat(third.getHeaders().getFirst("RateLimit-Policy")).isEqualTo(
				"\"free-reports-concurrency\";q=2;qu=\"concurrency\", \"free-reports-tokens-1h\";q=1000;w=3600;qu=\"tokens\"");
		assertThat(third.getBody()).contains("\"violated-policies\":[\"free-reports-concurrency\"]");

		await().atMost(Duration.ofSeconds(10)).until(() -> ConcurrencyRoutesIntegrationTest.done(held).size() == 2);
		assertThat(ConcurrencyRoutesIntegrationTest.done(held)).allSatisfy((answer) -> assertThat(
				answer.getStatusCode().value())
			.isEqualTo(200));
		// the same requests: slots given back, and charged 30 + 250 (the denied one took nothing)
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(slotsTaken()).isZero();
			assertThat(usage(key).remaining()).isBetween(720L, 721L);
		});

		// an upstream error: the slot comes back, the answer is charged what it reported (every status counts)
		assertThat(ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/4?used=40&status=500", key)
			.join()
			.getStatusCode()
			.value()).isEqualTo(500);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(slotsTaken()).isZero();
			assertThat(usage(key).remaining()).isBetween(680L, 681L);
		});

		// both slots free again
		List<CompletableFuture<ResponseEntity<String>>> next = List.of(
				ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/5?used=10&delay=500", key),
				ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/6?used=10&delay=500", key));
		assertThat(next).allSatisfy((answer) -> assertThat(answer.orTimeout(10, TimeUnit.SECONDS)
			.join()
			.getStatusCode()
			.value()).isEqualTo(200));
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(slotsTaken()).isZero();
			assertThat(usage(key).remaining()).isBetween(660L, 661L);
		});

		// an upstream that closes the connection without answering (it may have got the request): the slot is kept
		// (it frees itself at max-request-duration), the reservation charged (no answer, no usage reported)
		assertThat(ConcurrencyRoutesIntegrationTest.get(this.port, "/v1/header/reports/7?used=5&fail=true", key)
			.join()
			.getStatusCode()
			.is5xxServerError()).isTrue();
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(slotsTaken()).isEqualTo(1);
			assertThat(usage(key).remaining()).isBetween(560L, 561L);
		});
	}

	/** Slots taken now in the group's concurrency limit (the only client there: Redis is flushed per test). */
	private static long slotsTaken() {
		String keys = redis.command("KEYS", "rl:{reports|*:cc");
		return keys.isEmpty() ? 0 : Long.parseLong(redis.command("ZCARD", keys.split("\n")[0]));
	}

	/** The client's usage limit in the group, read from Redis without consuming. */
	private LimitStatus usage(String key) {
		PlanLimits planLimits = this.limits.limitsFor("free", "reports");
		ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(key), "free");
		return this.store.tryConsume(client, planLimits, Cost.NONE)
			.orTimeout(10, TimeUnit.SECONDS)
			.join()
			.statuses()
			.stream()
			.filter((s) -> s.limit().isUsage())
			.findFirst()
			.orElseThrow();
	}

}
