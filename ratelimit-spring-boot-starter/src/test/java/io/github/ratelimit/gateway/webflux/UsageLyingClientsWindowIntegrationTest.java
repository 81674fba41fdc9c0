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
 * {@link UsageLyingClientsIntegrationTest} with a fixed window: clients on three gateway instances over one Redis
 * reserve 1 token and use 1,000 to {@value #MOST_USED} (route {@code lying-window}: 5,000 tokens per one-second
 * window, at most {@value #IN_FLIGHT} requests in flight). The window carries what it was charged beyond its capacity
 * into the windows after, so what got through obeys capacity x windows touched + in flight x the largest answer, the
 * window's count in Redis still holds every unit reported beyond the capacity of the windows that ended, nothing is
 * forgiven, and the client in debt is refused with the Retry-After of the first window its carried count admits it
 * in.
 */
@ActiveProfiles("usage-bounds-it")
class UsageLyingClientsWindowIntegrationTest extends BaseRouteIntegrationTest {

	private static final long CAPACITY = 5000;

	private static final long WINDOW_MILLIS = 1000;

	/** The group's concurrency limit: the operator's cap on requests in flight. */
	private static final int IN_FLIGHT = 3;

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
					.registerBean(ReactorResourceFactory.class, UsageLyingClientsWindowIntegrationTest::ownEventLoops))
				.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port(), "--usage.upstream.uri=" + usageUpstream.uri()));
		}
	}

	@AfterAll
	static void stopTheOtherInstances() {
		others.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void lyingClientsOfAFixedWindowWaitOffWhatTheyUsedAcrossWindows() throws Exception {
		String key = "load-lying-window-" + UUID.randomUUID();
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
		long startMillis = System.currentTimeMillis();
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
						.uri("/v1/header/lying-window/x?used={used}&delay={delay}", used, 20 + random.nextInt(181))
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
		long endMillis = System.currentTimeMillis();
		String windowKey = bucketKey(key, "free", "lying-window") + ":fw";
		// the key lives while it carries a debt (without carrying, it expires at its window's end)
		assertThat(redis.command("HGET", windowKey, "w")).as("the window's state in Redis after the run").isNotNull();
		long windowStart = Long.parseLong(redis.command("HGET", windowKey, "w")) / 1000;
		long count = Long.parseLong(redis.command("HGET", windowKey, "c"));
		long windows = endMillis / WINDOW_MILLIS - startMillis / WINDOW_MILLIS + 1;
		long windowsEnded = windowStart / WINDOW_MILLIS - startMillis / WINDOW_MILLIS;
		double charged = sum(registries, MicrometerRateLimitMetrics.USAGE_CHARGED) - chargedBefore;
		long bound = CAPACITY * windows + IN_FLIGHT * MOST_USED;
		System.out.printf("Lying clients, fixed window, %d instances x %d loops, %d s, estimate 1, used 1,000 to %d: "
				+ "%d requests, %d admitted, %d denied; reported %d, charged %.0f; capacity %d x %d windows + %d in "
				+ "flight x %d = bound %d; the window counts %d after %d windows ended%n", instances.size(),
				LOOPS_PER_INSTANCE, RUN_SECONDS, MOST_USED, answers.size(), admitted.size(), denied, reported, charged,
				CAPACITY, windows, IN_FLIGHT, MOST_USED, bound, count, windowsEnded);

		// the bound the operator chose: capacity x windows touched + requests in flight x the largest answer
		assertThat(reported).as("usage that got through").isLessThanOrEqualTo(bound);
		assertThat(reported).as("the estimates were lies").isGreaterThan(10L * admitted.size());
		// nothing forgiven: what was reported is counted in the window, or was the capacity of a window that ended
		assertThat(count + CAPACITY * windowsEnded).as("count + capacity of the windows ended")
			.isGreaterThanOrEqualTo(reported);
		assertThat(windowsEnded).as("windows ended while the clients ran").isGreaterThanOrEqualTo(3);
		assertThat(charged).as("ratelimit.usage.charged").isEqualTo((double) reported);
		assertThat(sum(registries, MicrometerRateLimitMetrics.USAGE_FORGIVEN) - forgivenBefore)
			.as("ratelimit.usage.forgiven")
			.isZero();

		// a client in debt (one more lie of three capacities, in case the run's debt is repaid meanwhile) is refused
		// until the first window whose carried count admits 1 more token: the m-th after the stored one,
		// m = ceil((count - (capacity - 1)) / capacity)
		ResponseEntity<String> lie = instances.get(0)
			.get()
			.uri("/v1/header/lying-window/x?used={used}", 3 * CAPACITY)
			.header("X-API-Key", key)
			.header("X-Estimate", "1")
			.exchangeToMono((r) -> r.toEntity(String.class))
			.block(Duration.ofSeconds(30));
		if (lie.getStatusCode().value() == 200) {
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> sum(registries, MicrometerRateLimitMetrics.USAGE_CHARGED) - chargedBefore,
						(units) -> units >= reported + 3 * CAPACITY);
		}
		long debtStart = Long.parseLong(redis.command("HGET", windowKey, "w")) / 1000;
		long debtCount = Long.parseLong(redis.command("HGET", windowKey, "c"));
		long admitsAt = debtStart + WINDOW_MILLIS * Math.max(1, (debtCount - CAPACITY + 1 + CAPACITY - 1) / CAPACITY);
		long asked = System.currentTimeMillis();
		ResponseEntity<String> refused = instances.get(1)
			.get()
			.uri("/v1/header/lying-window/x?used=1")
			.header("X-API-Key", key)
			.header("X-Estimate", "1")
			.exchangeToMono((r) -> r.toEntity(String.class))
			.block(Duration.ofSeconds(30));
		assertThat(refused.getStatusCode().value()).isEqualTo(429);
		double waitSeconds = (admitsAt - asked) / 1000.0;
		assertThat(Long.parseLong(refused.getHeaders().getFirst("Retry-After")))
			.as("Retry-After, window count %d", debtCount)
			.isBetween((long) Math.floor(waitSeconds) - 1, (long) Math.ceil(waitSeconds) + 1);
	}

	/** A counter's total on the route {@code lying-window}, over every instance. */
	private static double sum(List<MeterRegistry> registries, String name) {
		return registries.stream()
			.flatMap((registry) -> registry.find(name).tag("route", "lying-window").counters().stream())
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
