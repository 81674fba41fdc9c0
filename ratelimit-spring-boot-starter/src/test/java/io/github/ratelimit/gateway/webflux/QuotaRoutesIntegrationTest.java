package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.StoredTokens;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Calendar quotas (issue 31) through two real gateway instances (this test's and a second one started beside it)
 * sharing one real Redis, in front of a real upstream ({@link RecordingUpstream}); profile {@code quota-it}.
 *
 * <p>The zones are fixed offsets computed when the class is loaded, so that every boundary is where the test needs
 * it whatever the time of day: plan {@code free}'s {@code quota-zone} has its local noon at that moment (its days,
 * weeks and months end at least 12 hours away, so nothing resets during a test), and plans {@code edge0} to
 * {@code edge}{@value #EDGE_PLANS}{@code -1}, each a daily quota of {@value #EDGE_LIMIT}, have their local midnights
 * {@link #FIRST_EDGE} after that moment and then every {@link #EDGE_SPACING}: the reset test takes the first whose
 * midnight is at least {@link #BEFORE_EDGE} away when it runs (how long the two contexts took to start does not
 * matter). A key {@code <plan>:<anything>} is of that plan ({@link QuotaGateway}); each test uses keys of its own,
 * since the second instance's over-limit cache is not cleared between tests.
 */
@SpringBootTest(classes = QuotaRoutesIntegrationTest.QuotaGateway.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("quota-it")
class QuotaRoutesIntegrationTest extends BaseRouteIntegrationTest {

	private static final long DAY_SECONDS = 86_400;

	/** When the class was loaded, in whole seconds: the zones are placed around it. */
	private static final Instant CLASS_START = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);

	/** Plan free's zone: local noon at {@link #CLASS_START}, local midnight 12 hours later. */
	private static final ZoneOffset FREE_ZONE = offsetWithMidnightAt(CLASS_START.plus(Duration.ofHours(12)));

	private static final int EDGE_PLANS = 45;

	private static final long EDGE_LIMIT = 3;

	private static final Duration FIRST_EDGE = Duration.ofSeconds(8);

	private static final Duration EDGE_SPACING = Duration.ofSeconds(2);

	/** How far at least the reset test's boundary is when the test starts: time to exhaust and see t go down. */
	private static final Duration BEFORE_EDGE = Duration.ofSeconds(4);

	/** Every property the test sets, for both instances: the zones and the edge plans. */
	private static final Map<String, String> ZONES_AND_EDGE_PLANS = zonesAndEdgePlans();

	private static final Pattern FIELD_MEMBER = Pattern.compile("\"([^\"]+)\";r=(-?\\d+);t=(\\d+)");

	private static ConfigurableApplicationContext second;

	private WebClient first;

	private WebClient other;

	@DynamicPropertySource
	static void zoneProperties(DynamicPropertyRegistry registry) {
		ZONES_AND_EDGE_PLANS.forEach((name, value) -> registry.add(name, () -> value));
	}

	@BeforeAll
	static void startSecondInstance() {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
				"--upstream.uri=" + upstream.uri()));
		ZONES_AND_EDGE_PLANS.forEach((name, value) -> args.add("--" + name + "=" + value));
		second = new SpringApplicationBuilder(QuotaGateway.class).profiles("quota-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(ReactorResourceFactory.class, QuotaRoutesIntegrationTest::ownEventLoops))
			.run(args.toArray(String[]::new));
	}

	@AfterAll
	static void stopSecondInstance() {
		if (second != null) {
			second.close();
		}
	}

	private WebClient first() {
		if (this.first == null) {
			this.first = WebClient.create("http://127.0.0.1:" + this.port);
			this.other = WebClient.create("http://127.0.0.1:" + second.getEnvironment().getProperty("local.server.port"));
		}
		return this.first;
	}

	private WebClient other() {
		first();
		return this.other;
	}

	@Test
	void aQuotaAdmitsExactlyItsLimitAcrossTwoInstancesUnderConcurrentRequests() {
		String key = "free:" + UUID.randomUUID();
		Instant before = Instant.now();
		List<ResponseEntity<String>> answers = Flux.range(0, 30)
			.flatMap((i) -> ((i % 2 == 0) ? first() : other()).get()
				.uri("/daily/{i}", i)
				.header("X-API-Key", key)
				.exchangeToMono((r) -> r.toEntity(String.class)), 30)
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(answers).hasSize(30);
		assertThat(answers.stream().filter((a) -> a.getStatusCode().value() == 200)).hasSize(7);
		assertThat(answers.stream().filter((a) -> a.getStatusCode().value() == 429)).hasSize(23);
		// each admitted request was told a different remaining count: 6 down to 0
		assertThat(answers.stream()
			.filter((a) -> a.getStatusCode().value() == 200)
			.map((a) -> member(a, "free-daily-day").remaining())).containsExactlyInAnyOrder(6L, 5L, 4L, 3L, 2L, 1L, 0L);
		assertThat(upstream.received()).hasSize(7).allMatch((target) -> target.startsWith("/daily/"));
		// Redis counts 7 in the period of today in free's zone
		QuotaPeriod day = QuotaPeriod.of(QuotaPeriodUnit.DAY, FREE_ZONE);
		String quotaKey = quotaKey(key, "daily", 0);
		assertThat(redis.command("HGET", quotaKey, "c")).isEqualTo("7");
		assertThat(redis.command("HGET", quotaKey, "p")).isEqualTo(micros(day.periodAt(before).start()));
	}

	@Test
	void aDenialByAQuotaIs429WithRetryAfterUntilTheResetAndAProblemNamingTheQuota() {
		String key = "free:" + UUID.randomUUID();
		QuotaPeriod day = QuotaPeriod.of(QuotaPeriodUnit.DAY, FREE_ZONE);
		for (int i = 0; i < 7; i++) {
			Instant before = Instant.now();
			ResponseEntity<String> admitted = get((i % 2 == 0) ? first() : other(), "/daily/" + i, key);
			Instant after = Instant.now();
			assertThat(admitted.getStatusCode().value()).isEqualTo(200);
			assertThat(admitted.getHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-daily-day\";q=7;w=86400");
			Member member = member(admitted, "free-daily-day");
			assertThat(member.remaining()).isEqualTo(6 - i);
			assertWithinASecondOf(member.t(), day, before, after);
		}
		for (WebClient web : List.of(first(), other())) {
			Instant before = Instant.now();
			ResponseEntity<String> denied = get(web, "/daily/x", key);
			Instant after = Instant.now();
			assertThat(denied.getStatusCode().value()).isEqualTo(429);
			long retryAfter = Long.parseLong(denied.getHeaders().getFirst("Retry-After"));
			assertWithinASecondOf(retryAfter, day, before, after);
			assertThat(retryAfter).isGreaterThan(DAY_SECONDS / 2 - 3600); // about 12 hours: the period's end, not a rate
			assertThat(denied.getHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-daily-day\";q=7;w=86400");
			Member member = member(denied, "free-daily-day");
			assertThat(member.remaining()).isZero();
			assertWithinASecondOf(member.t(), day, before, after);
			assertThat(denied.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
			assertThat(denied.getBody()).contains("\"status\":429")
				.contains("\"detail\":\"Quota exceeded for free-daily-day; retry after " + retryAfter + " s.\"")
				.contains("\"violated-policies\":[\"free-daily-day\"]");
		}
		assertThat(upstream.received()).hasSize(7);
		assertThat(redis.command("HGET", quotaKey(key, "daily", 0), "c")).isEqualTo("7");
	}

	@Test
	void aDailyQuotaResetsAtLocalMidnightAFewSecondsFromNowWithTCountingDownToIt() {
		Instant now = redisNow();
		int edge = 0;
		while (edge < EDGE_PLANS && edgeMidnight(edge).isBefore(now.plus(BEFORE_EDGE))) {
			edge++;
		}
		assertThat(edge).as("an edge plan whose midnight is at least %s after %s (class loaded %s)", BEFORE_EDGE, now,
				CLASS_START).isLessThan(EDGE_PLANS);
		Instant midnight = edgeMidnight(edge);
		String plan = "edge" + edge;
		String policy = plan + "-daily-day";
		String key = plan + ":" + UUID.randomUUID();
		QuotaPeriod day = QuotaPeriod.of(QuotaPeriodUnit.DAY, offsetWithMidnightAt(midnight));
		assertThat(day.periodAt(now).end()).isEqualTo(midnight);

		// before the boundary: the quota of 3 exhausted over both instances
		for (int i = 0; i < EDGE_LIMIT; i++) {
			Instant before = Instant.now();
			ResponseEntity<String> admitted = get((i % 2 == 0) ? first() : other(), "/daily/" + i, key);
			Instant after = Instant.now();
			assertThat(admitted.getStatusCode().value()).isEqualTo(200);
			assertThat(admitted.getHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"" + policy + "\";q=" + EDGE_LIMIT + ";w=86400");
			assertThat(member(admitted, policy).remaining()).isEqualTo(EDGE_LIMIT - 1 - i);
			assertWithinASecondOf(member(admitted, policy).t(), day, before, after);
		}
		Instant before = Instant.now();
		ResponseEntity<String> denied = get(other(), "/daily/x", key);
		Instant after = Instant.now();
		assertThat(denied.getStatusCode().value()).isEqualTo(429);
		long retryAfter = Long.parseLong(denied.getHeaders().getFirst("Retry-After"));
		assertWithinASecondOf(retryAfter, day, before, after);
		long firstT = member(denied, policy).t();
		assertWithinASecondOf(firstT, day, before, after);
		// at most the time from the edge plan's pick to its midnight (edge0's can be FIRST_EDGE away when the class's
		// contexts started fast, any later one less than BEFORE_EDGE plus one EDGE_SPACING)
		long pickedToMidnight = (Duration.between(now, midnight).toMillis() + 999) / 1000;
		assertThat(firstT).as("seconds to midnight").isBetween(1L, pickedToMidnight);
		String quotaKey = quotaKey(key, "daily", 0);
		assertThat(redis.command("HGET", quotaKey, "p")).isEqualTo(micros(midnight.minus(Duration.ofDays(1))));
		assertThat(redis.command("HGET", quotaKey, "c")).isEqualTo(Long.toString(EDGE_LIMIT));

		// t counts down to the boundary: a later denial (from Redis or the over-limit cache) has a smaller t
		long[] laterT = new long[1];
		await().atMost(Duration.between(Instant.now(), midnight).plusSeconds(1))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> {
				ResponseEntity<String> again = get(first(), "/daily/y", key);
				assertThat(again.getStatusCode().value()).as("denied before midnight").isEqualTo(429);
				laterT[0] = member(again, policy).t();
				return laterT[0] < firstT;
			});
		assertThat(laterT[0]).isBetween(0L, firstT - 1);
		assertThat(redis.command("HGET", quotaKey, "c")).isEqualTo(Long.toString(EDGE_LIMIT));

		// past the boundary on Redis' clock: admitted again, the new day's count starting at 1
		await().atMost(Duration.between(Instant.now(), midnight).plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !redisNow().isBefore(midnight));
		ResponseEntity<String> admitted = get(first(), "/daily/z", key);
		assertThat(admitted.getStatusCode().value()).isEqualTo(200);
		assertThat(admitted.getHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"" + policy + "\";q=" + EDGE_LIMIT + ";w=86400");
		assertThat(admitted.getHeaders().getFirst("RateLimit"))
			.matches(aboutRateLimit("\"" + policy + "\";r=" + (EDGE_LIMIT - 1) + ";t=86400"));
		assertThat(redis.command("HGET", quotaKey, "p")).isEqualTo(micros(midnight));
		assertThat(redis.command("HGET", quotaKey, "c")).isEqualTo("1");
		assertThat(upstream.received()).containsExactly("/daily/0", "/daily/1", "/daily/2", "/daily/z");
	}

	@Test
	void aRequestDeniedByTheTokenBucketTakesNothingFromTheQuota() {
		String key = "free:" + UUID.randomUUID();
		for (int i = 0; i < 3; i++) {
			ResponseEntity<String> admitted = get((i % 2 == 0) ? first() : other(), "/burst/" + i, key);
			assertThat(admitted.getStatusCode().value()).isEqualTo(200);
			assertThat(member(admitted, "free-burst").remaining()).isEqualTo(2 - i);
			assertThat(member(admitted, "free-burst-day").remaining()).isEqualTo(99 - i);
		}
		String quotaKey = quotaKey(key, "burst", 1);
		assertThat(redis.command("HGET", quotaKey, "c")).isEqualTo("3");
		for (WebClient web : List.of(first(), other())) {
			ResponseEntity<String> denied = get(web, "/burst/x", key);
			assertThat(denied.getStatusCode().value()).isEqualTo(429);
			assertThat(denied.getBody()).contains("\"violated-policies\":[\"free-burst\"]");
			assertThat(member(denied, "free-burst").remaining()).isZero();
			assertThat(member(denied, "free-burst-day").remaining()).isEqualTo(97);
			assertThat(Long.parseLong(denied.getHeaders().getFirst("Retry-After"))).as("the bucket's wait")
				.isBetween(1100L, 1200L);
		}
		assertThat(redis.command("HGET", quotaKey, "c")).as("denied requests counted in no quota").isEqualTo("3");
		assertThat(upstream.received()).hasSize(3);
	}

	@Test
	void aRequestDeniedByTheQuotaTakesNoTokenFromTheBucket() {
		String key = "free:" + UUID.randomUUID();
		for (int i = 0; i < 2; i++) {
			ResponseEntity<String> admitted = get((i % 2 == 0) ? first() : other(), "/capped/" + i, key);
			assertThat(admitted.getStatusCode().value()).isEqualTo(200);
			assertThat(member(admitted, "free-capped").remaining()).isEqualTo(99 - i);
			assertThat(member(admitted, "free-capped-day").remaining()).isEqualTo(1 - i);
		}
		for (WebClient web : List.of(first(), other(), first())) {
			ResponseEntity<String> denied = get(web, "/capped/x", key);
			assertThat(denied.getStatusCode().value()).isEqualTo(429);
			assertThat(denied.getBody()).contains("\"violated-policies\":[\"free-capped-day\"]");
			assertThat(member(denied, "free-capped").remaining()).isEqualTo(98);
			assertThat(member(denied, "free-capped-day").remaining()).isZero();
		}
		// 100 tokens an hour refill 0.03 a second: the bucket holds the 98 the two admitted requests left
		double tokens = StoredTokens.of(redis::command, bucketKey(key, "free", "capped"), 100, 100, 3_600_000_000L);
		assertThat(tokens).isBetween(98.0, 98.5);
		assertThat(redis.command("HGET", quotaKey(key, "capped", 1), "c")).isEqualTo("2");
		assertThat(upstream.received()).hasSize(2);
	}

	@Test
	void weekAndMonthQuotasAreNamedAfterTheirPeriodAndTheirWIsTheCurrentPeriodsLength() {
		String key = "free:" + UUID.randomUUID();
		Instant before = Instant.now();
		ResponseEntity<String> admitted = get(first(), "/calendar/1", key);
		Instant after = Instant.now();
		assertThat(admitted.getStatusCode().value()).isEqualTo(200);
		QuotaPeriod week = QuotaPeriod.of(QuotaPeriodUnit.WEEK, FREE_ZONE);
		QuotaPeriod month = QuotaPeriod.of(QuotaPeriodUnit.MONTH, FREE_ZONE);
		long monthSeconds = YearMonth.from(before.atOffset(FREE_ZONE)).lengthOfMonth() * DAY_SECONDS;
		assertThat(month.seconds(before)).isEqualTo(monthSeconds);
		assertThat(admitted.getHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-calendar-week\";q=50;w=604800, \"free-calendar-month\";q=1000;w=" + monthSeconds);
		assertThat(member(admitted, "free-calendar-week").remaining()).isEqualTo(49);
		assertWithinASecondOf(member(admitted, "free-calendar-week").t(), week, before, after);
		assertThat(member(admitted, "free-calendar-month").remaining()).isEqualTo(999);
		assertWithinASecondOf(member(admitted, "free-calendar-month").t(), month, before, after);
		// the second instance counts in the same periods
		ResponseEntity<String> again = get(other(), "/calendar/2", key);
		assertThat(again.getHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo(admitted.getHeaders().getFirst("RateLimit-Policy"));
		assertThat(member(again, "free-calendar-week").remaining()).isEqualTo(48);
		assertThat(member(again, "free-calendar-month").remaining()).isEqualTo(998);
		assertThat(redis.command("HGET", quotaKey(key, "calendar", 0), "p"))
			.isEqualTo(micros(week.periodAt(before).start()));
		assertThat(redis.command("HGET", quotaKey(key, "calendar", 1), "p"))
			.isEqualTo(micros(month.periodAt(before).start()));
	}

	@Test
	void theLongestFixedPeriodWhoseBoundariesStartBeforeTheEpochCountsInRedis() {
		// 36,500 days from the epoch: the current period is [1970, 2069], the previous one starts before 1970 (the
		// boundaries sent start with a negative number, which the script once refused: every request fell back)
		String key = "free:" + UUID.randomUUID();
		QuotaPeriod century = QuotaPeriod.fixed(Duration.ofDays(36_500));
		for (int i = 0; i < 2; i++) {
			Instant before = Instant.now();
			ResponseEntity<String> admitted = get((i == 0) ? first() : other(), "/century/" + i, key);
			Instant after = Instant.now();
			assertThat(admitted.getStatusCode().value()).isEqualTo(200);
			assertThat(admitted.getHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"free-century-36500d\";q=2;w=3153600000");
			assertThat(member(admitted, "free-century-36500d").remaining()).isEqualTo(1 - i);
			assertWithinASecondOf(member(admitted, "free-century-36500d").t(), century, before, after);
		}
		ResponseEntity<String> denied = get(first(), "/century/x", key);
		assertThat(denied.getStatusCode().value()).isEqualTo(429);
		assertThat(denied.getHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-century-36500d\";q=2;w=3153600000");
		assertThat(denied.getBody()).contains("\"violated-policies\":[\"free-century-36500d\"]");
		assertThat(redis.command("HGET", quotaKey(key, "century", 0), "p")).isEqualTo("0");
		assertThat(redis.command("HGET", quotaKey(key, "century", 0), "c")).isEqualTo("2");
		assertThat(upstream.received()).hasSize(2);
	}

	/**
	 * Asserts that a number of seconds until a period's end, read between two instants, is within a second of what
	 * {@link QuotaPeriod#untilEnd} gives over that time (rounded up, as the fields and Retry-After are).
	 */
	private static void assertWithinASecondOf(long seconds, QuotaPeriod period, Instant before, Instant after) {
		long atMost = ceilSeconds(period.untilEnd(before));
		long atLeast = ceilSeconds(period.untilEnd(after));
		assertThat(seconds).as("seconds until %s (read between %s and %s)", period.periodAt(before).end(), before, after)
			.isBetween(atLeast - 1, atMost + 1);
	}

	private static long ceilSeconds(Duration duration) {
		return (duration.toNanos() + 999_999_999L) / 1_000_000_000L;
	}

	private static ResponseEntity<String> get(WebClient web, String path, String key) {
		return web.get()
			.uri(path)
			.header("X-API-Key", key)
			.exchangeToMono((r) -> r.toEntity(String.class))
			.block(Duration.ofSeconds(10));
	}

	/** One policy's member of an answer's {@code RateLimit} field. */
	private static Member member(ResponseEntity<String> answer, String policy) {
		String field = answer.getHeaders().getFirst("RateLimit");
		assertThat(field).as("RateLimit of a %s", answer.getStatusCode()).isNotNull();
		Matcher member = FIELD_MEMBER.matcher(field);
		while (member.find()) {
			if (member.group(1).equals(policy)) {
				return new Member(Long.parseLong(member.group(2)), Long.parseLong(member.group(3)));
			}
		}
		throw new AssertionError("no member " + policy + " in RateLimit: " + field);
	}

	/** Redis' own time. */
	private static Instant redisNow() {
		String[] time = redis.command("TIME").split("\n");
		return Instant.ofEpochSecond(Long.parseLong(time[0].trim()), Long.parseLong(time[1].trim()) * 1000);
	}

	private static String micros(Instant instant) {
		return Long.toString(instant.toEpochMilli() * 1000);
	}

	/**
	 * The key of an API key client's quota at an index of its group's list (the other limits' algorithms do not
	 * change it).
	 */
	private static String quotaKey(String apiKey, String group, int index) {
		String plan = apiKey.substring(0, apiKey.indexOf(':'));
		List<LimitDefinition> limits = new ArrayList<>();
		for (int i = 0; i < index; i++) {
			limits.add(new LimitDefinition("other" + i, 1, 1, Duration.ofSeconds(1)));
		}
		limits.add(LimitDefinition.quota("quota", 1, QuotaPeriod.of(QuotaPeriodUnit.DAY, ZoneOffset.UTC)));
		return new BucketKeys("rl")
			.keysFor(new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(apiKey), plan),
					new PlanLimits(plan, group, limits))
			.get(index);
	}

	/** When plan {@code edge<k>}'s day ends. */
	private static Instant edgeMidnight(int k) {
		return CLASS_START.plus(FIRST_EDGE).plus(EDGE_SPACING.multipliedBy(k));
	}

	/**
	 * The fixed offset in [-12:00, +12:00) whose local midnight falls at an instant: {@code -(epoch seconds)} mod one
	 * day (ZoneOffset takes seconds).
	 */
	static ZoneOffset offsetWithMidnightAt(Instant midnight) {
		long offset = Math.floorMod(-midnight.getEpochSecond(), DAY_SECONDS);
		if (offset >= DAY_SECONDS / 2) {
			offset -= DAY_SECONDS;
		}
		return ZoneOffset.ofTotalSeconds((int) offset);
	}

	private static Map<String, String> zonesAndEdgePlans() {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("ratelimit.plans.free.quota-zone", FREE_ZONE.getId());
		for (int k = 0; k < EDGE_PLANS; k++) {
			String plan = "ratelimit.plans.edge" + k;
			properties.put(plan + ".quota-zone", offsetWithMidnightAt(edgeMidnight(k)).getId());
			properties.put(plan + ".default[0].capacity", "100");
			properties.put(plan + ".default[0].refill-tokens", "1");
			properties.put(plan + ".default[0].refill-period", "1m");
			properties.put(plan + ".groups.daily[0].type", "quota");
			properties.put(plan + ".groups.daily[0].limit", Long.toString(EDGE_LIMIT));
			properties.put(plan + ".groups.daily[0].period", "day");
		}
		return properties;
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	/** A member of a {@code RateLimit} field: remaining tokens and seconds until the reset. */
	private record Member(long remaining, long t) {
	}

	/** The route tests' gateway, whose plan resolver reads the plan from a key {@code <plan>:<anything>}. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class QuotaGateway {

		@Bean
		PlanResolver quotaPlanResolver() {
			return (apiKey) -> {
				int colon = apiKey.value().indexOf(':');
				return CompletableFuture
					.completedFuture((colon > 0) ? Optional.of(apiKey.value().substring(0, colon)) : Optional.empty());
			};
		}

	}

}
