package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.gateway.webflux.UsageLoad.Answer;
import io.github.ratelimit.gateway.webflux.UsageLoad.Load;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Clients that lie about their estimate, on three gateway instances over one Redis (this test's gateway and two
 * started beside it), once per algorithm of the usage limit: one client keeps {@value #LOOPS_PER_INSTANCE} requests
 * going on each instance for {@value #RUN_SECONDS} s, each reserving 1 token ({@code X-Estimate: 1}) and using 1,000 to
 * {@value #MOST_USED}.
 * <ul>
 * <li>A token bucket (route {@code lying}: capacity 2,000 tokens, 1,000 a second, at most 6 requests in flight) owes
 * all they use and the client waits it off: what got through obeys the bound the operator chose, capacity + rate x t +
 * in flight x the largest answer; the bucket's level in Redis after the run is the capacity and the refill less every
 * unit reported (nothing forgiven), and the client in debt is refused with the Retry-After its debt needs.</li>
 * <li>A fixed window (route {@code lying-window}: 5,000 tokens per one-second window, at most 3 requests in flight)
 * carries what it was charged beyond its capacity into the windows after, so what got through obeys capacity x windows
 * touched + in flight x the largest answer, the window's count in Redis still holds every unit reported beyond the
 * capacity of the windows that ended, and the client in debt is refused with the Retry-After of the first window its
 * carried count admits it in.</li>
 * </ul>
 * For both, the meters count what Redis charged ({@code ratelimit.usage.charged}, all that was reported), what answers
 * reported ({@code ratelimit.usage.reported}) and nothing forgiven.
 */
@ActiveProfiles("usage-bounds-it")
class UsageLyingClientsIntegrationTest extends BaseRouteIntegrationTest {

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
			others.add(UsageLoad.startInstance(redis, usageUpstream));
		}
	}

	@AfterAll
	static void stopTheOtherInstances() {
		others.forEach(ConfigurableApplicationContext::close);
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource
	void lyingClientsWaitOffWhatTheyUsedAndTheMetersSayWhatRedisCharged(Algorithm algorithm) throws Exception {
		String route = algorithm.route;
		String key = "load-" + route + "-" + UUID.randomUUID();
		List<MeterRegistry> registries = new ArrayList<>(List.of(this.meters));
		List<WebClient> instances = new ArrayList<>(List.of(WebClient.create("http://127.0.0.1:" + this.port)));
		for (ConfigurableApplicationContext other : others) {
			registries.add(other.getBean(MeterRegistry.class));
			instances.add(UsageLoad.webClient(other));
		}
		Meters meters = new Meters(registries, route);
		long startMillis = System.currentTimeMillis();
		long start = System.nanoTime();
		Load load = UsageLoad.run(instances, LOOPS_PER_INSTANCE, Duration.ofSeconds(RUN_SECONDS), (i) -> 17L * i + 3,
				(web, random) -> {
					long used = 1000 + random.nextInt((int) MOST_USED - 999);
					long sent = System.nanoTime();
					ResponseEntity<String> response = send(web, key, "/v1/header/{route}/x?used={used}&delay={delay}",
							route, used, 20 + random.nextInt(181));
					return new Answer(used, sent, System.nanoTime(), response);
				});
		assertThat(load.admitted().size() + load.denied().size()).as("every answer 200 or 429")
			.isEqualTo(load.answers().size());
		long reported = load.reported();

		// every admitted request settled on every instance: the meters count what answers reported
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(10))
			.until(meters::reported, (units) -> units >= reported);
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(10))
			.until(meters::charged, (units) -> units >= reported);
		Run run = new Run(key, instances, meters, load, start, startMillis);
		switch (algorithm) {
			case TOKEN_BUCKET -> tokenBucketOwesEveryUnit(run);
			case FIXED_WINDOW -> fixedWindowCarriesEveryUnit(run);
		}
	}

	/** Route {@code lying}: a token bucket of 2,000 tokens, 1,000 a second, at most 6 requests in flight. */
	private void tokenBucketOwesEveryUnit(Run run) {
		long capacity = 2000;
		long refillTokens = 2000;
		long refillPeriodMicros = 2_000_000;
		double ratePerSecond = refillTokens / (refillPeriodMicros / 1e6);
		int inFlight = 6;
		String bucketKey = bucketKey(run.key, "free", "lying");
		long reported = run.load.reported();
		double level = StoredTokens.of(redis::command, bucketKey, capacity, refillTokens, refillPeriodMicros);
		double refill = ratePerSecond * (System.nanoTime() - run.start) / 1e9;
		double charged = run.meters.charged();
		double bound = capacity + refill + inFlight * MOST_USED;
		System.out.printf("Lying clients, %d instances x %d loops, %d s, estimate 1, used 1,000 to %d: %d requests, "
				+ "%d admitted, %d denied; reported %d, charged %.0f; capacity %d + refill %.0f + %d in flight x %d = "
				+ "bound %.0f; bucket after the run %.1f (owes %.0f)%n", run.instances.size(), LOOPS_PER_INSTANCE,
				RUN_SECONDS, MOST_USED, run.load.answers().size(), run.load.admitted().size(),
				run.load.denied().size(), reported, charged, capacity, refill, inFlight, MOST_USED, bound, level,
				Math.max(0, -level));

		// the bound the operator chose: capacity + rate x t + requests in flight x the largest answer
		assertThat((double) reported).as("usage that got through").isLessThanOrEqualTo(bound);
		assertThat(reported).as("the estimates were lies").isGreaterThan(10L * run.load.admitted().size());
		// nothing forgiven: the bucket's level is the capacity and the refill less every unit reported (the first
		// admission came a little after the start, so up to half a second of refill less)
		double expected = capacity + refill - reported;
		assertThat(level).as("bucket level against capacity + refill - reported")
			.isBetween(expected - ratePerSecond / 2, expected + 1);
		assertThat(level).as("the client owes more than one capacity").isLessThan(-capacity);
		// the meters: charged is what Redis took, reported is what answers reported, nothing forgiven
		assertThat(charged).as("ratelimit.usage.charged").isEqualTo((double) reported);
		assertThat(capacity + refill - charged).as("charged against the bucket's level")
			.isBetween(level - 1, level + ratePerSecond / 2);
		assertThat(run.meters.reported()).as("ratelimit.usage.reported").isEqualTo((double) reported);
		assertThat(run.meters.forgiven()).as("ratelimit.usage.forgiven").isZero();

		// the client in debt is refused until it has waited its debt off: Retry-After counts the debt and the estimate
		double owed = StoredTokens.of(redis::command, bucketKey, capacity, refillTokens, refillPeriodMicros);
		ResponseEntity<String> refused = send(run.instances.get(1), run.key, "/v1/header/lying/x?used=1");
		assertThat(refused.getStatusCode().value()).isEqualTo(429);
		double waitSeconds = (1 - owed) / ratePerSecond;
		assertThat(Long.parseLong(refused.getHeaders().getFirst("Retry-After"))).as("Retry-After, debt %.0f", -owed)
			.isBetween((long) Math.floor(waitSeconds) - 1, (long) Math.ceil(waitSeconds));
	}

	/** Route {@code lying-window}: a fixed window of 5,000 tokens a second, at most 3 requests in flight. */
	private void fixedWindowCarriesEveryUnit(Run run) {
		long capacity = 5000;
		long windowMillis = 1000;
		int inFlight = 3;
		long reported = run.load.reported();
		long endMillis = System.currentTimeMillis();
		String windowKey = bucketKey(run.key, "free", "lying-window") + ":fw";
		// the key lives while it carries a debt (without carrying, it expires at its window's end)
		assertThat(redis.command("HGET", windowKey, "w")).as("the window's state in Redis after the run").isNotNull();
		long windowStart = Long.parseLong(redis.command("HGET", windowKey, "w")) / 1000;
		long count = Long.parseLong(redis.command("HGET", windowKey, "c"));
		long windows = endMillis / windowMillis - run.startMillis / windowMillis + 1;
		long windowsEnded = windowStart / windowMillis - run.startMillis / windowMillis;
		double charged = run.meters.charged();
		long bound = capacity * windows + inFlight * MOST_USED;
		System.out.printf("Lying clients, fixed window, %d instances x %d loops, %d s, estimate 1, used 1,000 to %d: "
				+ "%d requests, %d admitted, %d denied; reported %d, charged %.0f; capacity %d x %d windows + %d in "
				+ "flight x %d = bound %d; the window counts %d after %d windows ended%n", run.instances.size(),
				LOOPS_PER_INSTANCE, RUN_SECONDS, MOST_USED, run.load.answers().size(), run.load.admitted().size(),
				run.load.denied().size(), reported, charged, capacity, windows, inFlight, MOST_USED, bound, count,
				windowsEnded);

		// the bound the operator chose: capacity x windows touched + requests in flight x the largest answer
		assertThat(reported).as("usage that got through").isLessThanOrEqualTo(bound);
		assertThat(reported).as("the estimates were lies").isGreaterThan(10L * run.load.admitted().size());
		// nothing forgiven: what was reported is counted in the window, or was the capacity of a window that ended
		assertThat(count + capacity * windowsEnded).as("count + capacity of the windows ended")
			.isGreaterThanOrEqualTo(reported);
		assertThat(windowsEnded).as("windows ended while the clients ran").isGreaterThanOrEqualTo(3);
		assertThat(charged).as("ratelimit.usage.charged").isEqualTo((double) reported);
		assertThat(run.meters.reported()).as("ratelimit.usage.reported").isEqualTo((double) reported);
		assertThat(run.meters.forgiven()).as("ratelimit.usage.forgiven").isZero();

		// a client in debt (one more lie of three capacities, in case the run's debt is repaid meanwhile) is refused
		// until the first window whose carried count admits 1 more token: the m-th after the stored one,
		// m = ceil((count - (capacity - 1)) / capacity)
		ResponseEntity<String> lie = send(run.instances.get(0), run.key, "/v1/header/lying-window/x?used={used}",
				3 * capacity);
		if (lie.getStatusCode().value() == 200) {
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(10))
				.until(run.meters::charged, (units) -> units >= reported + 3 * capacity);
		}
		long debtStart = Long.parseLong(redis.command("HGET", windowKey, "w")) / 1000;
		long debtCount = Long.parseLong(redis.command("HGET", windowKey, "c"));
		long admitsAt = debtStart + windowMillis * Math.max(1, (debtCount - capacity + 1 + capacity - 1) / capacity);
		long asked = System.currentTimeMillis();
		ResponseEntity<String> refused = send(run.instances.get(1), run.key, "/v1/header/lying-window/x?used=1");
		assertThat(refused.getStatusCode().value()).isEqualTo(429);
		double waitSeconds = (admitsAt - asked) / 1000.0;
		assertThat(Long.parseLong(refused.getHeaders().getFirst("Retry-After")))
			.as("Retry-After, window count %d", debtCount)
			.isBetween((long) Math.floor(waitSeconds) - 1, (long) Math.ceil(waitSeconds) + 1);
	}

	/** One GET of a lying client: estimate 1, whatever it asks the upstream to report. */
	private static ResponseEntity<String> send(WebClient web, String key, String uri, Object... variables) {
		return web.get()
			.uri(uri, variables)
			.header("X-API-Key", key)
			.header("X-Estimate", "1")
			.exchangeToMono((r) -> r.toEntity(String.class))
			.block(Duration.ofSeconds(30));
	}

	/** The usage limit under test, by the route whose group has it. */
	enum Algorithm {

		TOKEN_BUCKET("lying"), FIXED_WINDOW("lying-window");

		private final String route;

		Algorithm(String route) {
			this.route = route;
		}

	}

	/** The usage meters of one route over every instance, counted from when this was made. */
	private static final class Meters {

		private final List<MeterRegistry> registries;

		private final String route;

		private final double chargedBefore;

		private final double reportedBefore;

		private final double forgivenBefore;

		Meters(List<MeterRegistry> registries, String route) {
			this.registries = registries;
			this.route = route;
			this.chargedBefore = total(MicrometerRateLimitMetrics.USAGE_CHARGED);
			this.reportedBefore = total(MicrometerRateLimitMetrics.USAGE_REPORTED);
			this.forgivenBefore = total(MicrometerRateLimitMetrics.USAGE_FORGIVEN);
		}

		double charged() {
			return total(MicrometerRateLimitMetrics.USAGE_CHARGED) - this.chargedBefore;
		}

		double reported() {
			return total(MicrometerRateLimitMetrics.USAGE_REPORTED) - this.reportedBefore;
		}

		double forgiven() {
			return total(MicrometerRateLimitMetrics.USAGE_FORGIVEN) - this.forgivenBefore;
		}

		private double total(String name) {
			return UsageLoad.sum(this.registries, name, this.route);
		}

	}

	/** A run of the lying clients: their key, the instances, the meters since the start, the answers, the start. */
	private record Run(String key, List<WebClient> instances, Meters meters, Load load, long start, long startMillis) {
	}

}
