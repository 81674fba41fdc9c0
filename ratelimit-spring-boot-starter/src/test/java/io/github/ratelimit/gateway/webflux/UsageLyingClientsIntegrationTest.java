package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Clients that lie about their estimate, on three gateway instances over one Redis (this test's gateway and two
 * started beside it): one client keeps {@value #LOOPS_PER_INSTANCE} requests going on each instance for
 * {@value #RUN_SECONDS} s, each reserving 1 token ({@code X-Estimate: 1}) and using 1,000 to {@value #MOST_USED}
 * (route {@code lying}: capacity 2,000 tokens, 1,000 a second, at most {@value #IN_FLIGHT} requests in flight). The
 * bucket owes all they use and the client waits it off: what got through obeys the bound the operator chose,
 * capacity + rate x t + in flight x the largest answer; the bucket's level in Redis after the run is the capacity and
 * the refill less every unit reported (nothing forgiven); the meters count what Redis charged
 * ({@code ratelimit.usage.charged}, equal to the bucket's level), what answers reported ({@code ratelimit.usage.reported})
 * and nothing forgiven; and the client in debt is refused with the Retry-After its debt needs.
 */
@ActiveProfiles("usage-bounds-it")
class UsageLyingClientsIntegrationTest extends BaseRouteIntegrationTest {

	private static final long CAPACITY = 2000;

	private static final long REFILL_TOKENS = 2000;

	private static final long REFILL_PERIOD_MICROS = 2_000_000;

	private static final double RATE_PER_SECOND = REFILL_TOKENS / (REFILL_PERIOD_MICROS / 1e6);

	/** The group's concurrency limit: the operator's cap on requests in flight. */
	private static final int IN_FLIGHT = 6;

	private static final long MOST_USED = 3000;

	private static final int LOOPS_PER_INSTANCE = 4;

	private static final int RUN_SECONDS = 5;

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	private static final List<ConfigurableApplicationContext> others = new ArrayList<>();

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@BeforeAll
	static void startTwoMoreInstances() {
		for (int i = 0; i < 2; i++) {
			others.add(new SpringApplicationBuilder(GatewayTestApplication.class).profiles("usage-bounds-it")
				.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
					.registerBean(ReactorResourceFactory.class, UsageLyingClientsIntegrationTest::ownEventLoops))
				.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port(), "--usage.upstream.uri=" + usageUpstream.uri()));
		}
	}

	@AfterAll
	static void stopTheOtherInstances() {
		others.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void lyingClientsWaitOffWhatTheyUsedAndTheMetersSayWhatRedisCharged() throws Exception {
		String key = "load-lying-" + UUID.randomUUID();
		List<MeterRegistry> registries = new ArrayList<>(List.of(this.meters));
		List<WebClient> instances = new ArrayList<>(List.of(WebClient.create("http://127.0.0.1:" + this.port)));
		for (ConfigurableApplicationContext other : others) {
			registries.add(other.getBean(MeterRegistry.class));
			instances.add(WebClient
				.create("http://127.0.0.1:" + other.getEnvironment().getProperty("local.server.port")));
		}
		double chargedBefore = sum(registries, MicrometerRateLimitMetrics.USAGE_CHARGED);
		double reportedBefore = sum(registries, MicrometerRateLimitMetrics.USAGE_REPORTED);
		double forgivenBefore = sum(registries, MicrometerRateLimitMetrics.USAGE_FORGIVEN);
		ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
		int loopCount = LOOPS_PER_INSTANCE * instances.size();
		ExecutorService loops = Executors.newFixedThreadPool(loopCount);
		long start = System.nanoTime();
		long until = start + TimeUnit.SECONDS.toNanos(RUN_SECONDS);
		List<Future<?>> running = new ArrayList<>();
		for (int i = 0; i < loopCount; i++) {
			WebClient web = instances.get(i % instances.size());
			Random random = new Random(17L * i + 3);
			running.add(loops.submit(() -> {
				while (System.nanoTime() < until) {
					long used = 1000 + random.nextInt((int) MOST_USED - 999);
					ResponseEntity<String> response = web.get()
						.uri("/v1/header/lying/x?used={used}&delay={delay}", used, 20 + random.nextInt(181))
						.header("X-API-Key", key)
						.header("X-Estimate", "1")
						.exchangeToMono((r) -> r.toEntity(String.class))
						.block(Duration.ofSeconds(30));
					answers.add(new Answer(used, response));
					if (response.getStatusCode().value() == 429) {
						letTimePass(Duration.ofMillis(10)); // pacing a denied client, not a synchronisation
					}
				}
			}));
		}
		for (Future<?> loop : running) {
			loop.get(60, TimeUnit.SECONDS);
		}
		loops.shutdown();
		List<Answer> admitted = answers.stream().filter((a) -> a.response.getStatusCode().value() == 200).toList();
		long denied = answers.stream().filter((a) -> a.response.getStatusCode().value() == 429).count();
		assertThat(admitted.size() + denied).as("every answer 200 or 429").isEqualTo(answers.size());
		long reported = admitted.stream().mapToLong(Answer::used).sum();

		// every admitted request settled on every instance: the meters count what answers reported
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> sum(registries, MicrometerRateLimitMetrics.USAGE_REPORTED) - reportedBefore,
					(units) -> units >= reported);
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> sum(registries, MicrometerRateLimitMetrics.USAGE_CHARGED) - chargedBefore,
					(units) -> units >= reported);
		double level = StoredTokens.of(redis::command, bucketKey(key, "free", "lying"), CAPACITY, REFILL_TOKENS,
				REFILL_PERIOD_MICROS);
		double refill = RATE_PER_SECOND * (System.nanoTime() - start) / 1e9;
		double charged = sum(registries, MicrometerRateLimitMetrics.USAGE_CHARGED) - chargedBefore;
		double bound = CAPACITY + refill + IN_FLIGHT * MOST_USED;
		System.out.printf("Lying clients, %d instances x %d loops, %d s, estimate 1, used 1,000 to %d: %d requests, "
				+ "%d admitted, %d denied; reported %d, charged %.0f; capacity %d + refill %.0f + %d in flight x %d = "
				+ "bound %.0f; bucket after the run %.1f (owes %.0f)%n", instances.size(), LOOPS_PER_INSTANCE,
				RUN_SECONDS, MOST_USED, answers.size(), admitted.size(), denied, reported, charged, CAPACITY, refill,
				IN_FLIGHT, MOST_USED, bound, level, Math.max(0, -level));

		// the bound the operator chose: capacity + rate x t + requests in flight x the largest answer
		assertThat((double) reported).as("usage that got through").isLessThanOrEqualTo(bound);
		assertThat(reported).as("the estimates were lies").isGreaterThan(10L * admitted.size());
		// nothing forgiven: the bucket's level is the capacity and the refill less every unit reported (the first
		// admission came a little after the start, so up to half a second of refill less)
		double expected = CAPACITY + refill - reported;
		assertThat(level).as("bucket level against capacity + refill - reported")
			.isBetween(expected - RATE_PER_SECOND / 2, expected + 1);
		assertThat(level).as("the client owes more than one capacity").isLessThan(-CAPACITY);
		// the meters: charged is what Redis took, reported is what answers reported, nothing forgiven
		assertThat(charged).as("ratelimit.usage.charged").isEqualTo((double) reported);
		assertThat(CAPACITY + refill - charged).as("charged against the bucket's level")
			.isBetween(level - 1, level + RATE_PER_SECOND / 2);
		assertThat(sum(registries, MicrometerRateLimitMetrics.USAGE_REPORTED) - reportedBefore)
			.as("ratelimit.usage.reported")
			.isEqualTo((double) reported);
		assertThat(sum(registries, MicrometerRateLimitMetrics.USAGE_FORGIVEN) - forgivenBefore)
			.as("ratelimit.usage.forgiven")
			.isZero();

		// the client in debt is refused until it has waited its debt off: Retry-After counts the debt and the estimate
		double owed = StoredTokens.of(redis::command, bucketKey(key, "free", "lying"), CAPACITY, REFILL_TOKENS,
				REFILL_PERIOD_MICROS);
		ResponseEntity<String> refused = instances.get(1)
			.get()
			.uri("/v1/header/lying/x?used=1")
			.header("X-API-Key", key)
			.header("X-Estimate", "1")
			.exchangeToMono((r) -> r.toEntity(String.class))
			.block(Duration.ofSeconds(30));
		assertThat(refused.getStatusCode().value()).isEqualTo(429);
		double waitSeconds = (1 - owed) / RATE_PER_SECOND;
		assertThat(Long.parseLong(refused.getHeaders().getFirst("Retry-After"))).as("Retry-After, debt %.0f", -owed)
			.isBetween((long) Math.floor(waitSeconds) - 1, (long) Math.ceil(waitSeconds));
	}

	/** A counter's total on the route {@code lying}, over every instance. */
	private static double sum(List<MeterRegistry> registries, String name) {
		return registries.stream()
			.flatMap((registry) -> registry.find(name).tag("route", "lying").counters().stream())
			.mapToDouble(Counter::count)
			.sum();
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	/** One request: the usage the upstream was asked to report, and its answer. */
	private record Answer(long used, ResponseEntity<String> response) {
	}

}
