package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.gateway.webflux.UsageLoad.Answer;
import io.github.ratelimit.gateway.webflux.UsageLoad.Load;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bound of a usage limit over two gateway instances sharing one Redis (this test's gateway and a second one
 * started beside it), through a real upstream that reports usage ({@link UsageUpstream}): one client keeps 8 requests
 * in flight on each instance for {@value #RUN_SECONDS} s on a route that reserves {@value #RESERVE} tokens per request
 * (route {@code bounded}: capacity 2,000 tokens, 1,000 a second), while the upstream reports a usage drawn per request,
 * most of them above the estimate, some far below. The usage charged to the admitted requests is at most the capacity,
 * plus the refill over the run, plus one capacity (what a bucket may owe); the bucket in Redis holds every unit
 * reported; no request is admitted while the bucket cannot hold its reservation.
 */
@ActiveProfiles("usage-bounds-it")
class UsageTwoInstancesBoundIntegrationTest extends BaseRouteIntegrationTest {

	private static final long CAPACITY = 2000;

	/** Refill: 2,000 tokens per 2 s. */
	private static final long REFILL_TOKENS = 2000;

	private static final long REFILL_PERIOD_MICROS = 2_000_000;

	private static final double RATE_PER_SECOND = REFILL_TOKENS / (REFILL_PERIOD_MICROS / 1e6);

	private static final long RESERVE = 100;

	private static final int IN_FLIGHT_PER_INSTANCE = 8;

	private static final int RUN_SECONDS = 6;

	private static final Pattern REMAINING = Pattern.compile("\"free-bounded-tokens\";r=(-?\\d+)");

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	private static ConfigurableApplicationContext second;

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@BeforeAll
	static void startSecondInstance() {
		second = UsageLoad.startInstance(redis, usageUpstream);
	}

	@AfterAll
	static void stopSecondInstance() {
		if (second != null) {
			second.close();
		}
	}

	@Test
	void twoInstancesAdmitNoMoreThanCapacityPlusRefillPlusOneCapacityOwedAndRedisHoldsEveryUnitCharged()
			throws Exception {
		String key = "load-bound-" + UUID.randomUUID();
		double chargedBefore = charged(this.meters) + charged(second.getBean(MeterRegistry.class));
		WebClient first = WebClient.create("http://127.0.0.1:" + this.port);
		long start = System.nanoTime();
		Load load = UsageLoad.run(List.of(first, UsageLoad.webClient(second)), IN_FLIGHT_PER_INSTANCE,
				Duration.ofSeconds(RUN_SECONDS), (i) -> 31L * i + 7, (web, random) -> {
					// a quarter far below the estimate (5 to 30), the rest above it (130 to 200): an excess of at most
					// 100 per request, 1,600 for the 16 in flight, less than the 2,000 a bucket may owe
					long used = (random.nextInt(4) == 0) ? 5 + random.nextInt(26) : 130 + random.nextInt(71);
					long delay = 20 + random.nextInt(181);
					long sent = System.nanoTime();
					ResponseEntity<String> response = web.get()
						.uri("/v1/header/bounded/x?used={used}&delay={delay}", used, delay)
						.header("X-API-Key", key)
						.exchangeToMono((r) -> r.toEntity(String.class))
						.block(Duration.ofSeconds(30));
					return new Answer(used, sent, System.nanoTime(), response);
				});
		List<Answer> answers = load.answers();
		List<Answer> admitted = load.admitted();
		List<Answer> denied = load.denied();
		assertThat(admitted.size() + denied.size()).as("every answer 200 or 429").isEqualTo(answers.size());
		long reported = admitted.stream().mapToLong(Answer::used).sum();
		long excess = admitted.stream().mapToLong((a) -> Math.max(0, a.used() - RESERVE)).sum();
		long lastAnswer = answers.stream().mapToLong(Answer::answered).max().orElseThrow();

		// every admitted request is charged what its answer reported, on both instances (after the answers)
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> charged(this.meters) + charged(second.getBean(MeterRegistry.class)) - chargedBefore,
					(units) -> units >= reported);
		double tokens = StoredTokens.of(redis::command, bucketKey(key, "free", "bounded"), CAPACITY, REFILL_TOKENS,
				REFILL_PERIOD_MICROS);
		long settled = System.nanoTime();
		assertThat(charged(this.meters) + charged(second.getBean(MeterRegistry.class)) - chargedBefore)
			.isEqualTo((double) reported);
		double refillToLastAnswer = RATE_PER_SECOND * (lastAnswer - start) / 1e9;
		double refillToSettled = RATE_PER_SECOND * (settled - start) / 1e9;
		double bound = CAPACITY + refillToSettled + CAPACITY;
		System.out.printf("Usage bound, 2 instances x %d in flight, %d s: %d requests, %d admitted, %d denied; "
				+ "reported (charged) %d tokens, of which excess over the %d estimate %d; capacity %d + refill %.0f "
				+ "(to the last answer; %.0f to the last settlement) + owed at most %d = bound %.0f; "
				+ "bucket after the run %.1f tokens%n", IN_FLIGHT_PER_INSTANCE, RUN_SECONDS, answers.size(),
				admitted.size(), denied.size(), reported, RESERVE, excess, CAPACITY, refillToLastAnswer,
				refillToSettled, CAPACITY, bound, tokens);

		// the stated bound: capacity + rate x t + one capacity owed
		assertThat((double) reported).as("usage charged to admitted requests").isLessThanOrEqualTo(bound);
		// Redis holds every unit charged: what the bucket holds is at most the capacity and the refill less the usage
		// reported, and it owes at most one capacity
		double unaccounted = CAPACITY + refillToSettled - reported - tokens;
		assertThat(unaccounted).as("units refilled in no bucket, or reported and not charged in Redis")
			.isGreaterThanOrEqualTo(-1);
		assertThat(tokens).isGreaterThanOrEqualTo(-CAPACITY);
		// control: had the excess not been charged, the bucket would hold more than the capacity and the refill less
		// the usage reported, and the check above would fail
		assertThat(excess).as("excess over the estimates").isGreaterThan((long) Math.ceil(unaccounted) + 1);
		assertThat(reported).as("usage beyond what the estimates alone reserved")
			.isGreaterThan(admitted.size() * RESERVE);

		// no request admitted while the bucket could not hold its reservation; denials happen
		assertThat(denied).isNotEmpty();
		assertThat(admitted).allSatisfy((a) -> assertThat(remaining(a)).as("remaining after the reservation")
			.isBetween(0L, CAPACITY - RESERVE));
		assertThat(denied).allSatisfy((a) -> {
			assertThat(remaining(a)).as("remaining when denied").isLessThan(RESERVE);
			assertThat(Long.parseLong(a.response().getHeaders().getFirst("Retry-After"))).isGreaterThanOrEqualTo(1);
		});
	}

	private static long remaining(Answer answer) {
		String fields = answer.response().getHeaders().getFirst("RateLimit");
		assertThat(fields).as("RateLimit of a %d", answer.response().getStatusCode().value()).isNotNull();
		Matcher remaining = REMAINING.matcher(fields);
		assertThat(remaining.find()).as(fields).isTrue();
		return Long.parseLong(remaining.group(1));
	}

	/** Usage units charged on the route so far, by one instance. */
	private static double charged(MeterRegistry registry) {
		return registry.find(MicrometerRateLimitMetrics.USAGE_CHARGED)
			.tag("route", "bounded")
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

}
