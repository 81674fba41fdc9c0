package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.test.SteadyTraffic;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A request decided without Redis takes nothing in Redis, however late Redis answers: Redis is paused (SIGSTOP) for
 * 0.5, 2 and 12 s, longer than the limiter waits (200 ms) and, but for the first, than Lettuce's command timeout
 * (500 ms); 12 s is longer than the limiter's client waits for a script's reply (10 s), so the checks sent early in
 * that pause lose their replies and only their deadline keeps them from charging. Under steady traffic of every limit type at once: a token bucket, a calendar quota, a token bucket with a
 * concurrency limit, a usage limit, a token bucket with leases and a critical login route. After SIGCONT, Redis holds
 * exactly what the requests Redis decided (200 with RateLimit fields) took: nothing of the fallback's decisions nor of
 * the 503s, and no concurrency slot. One exception, which the deadline cannot cover (failure policy, "a check Redis ran
 * in time whose answer is lost"): in the 12 s pause, the check each client had out when Redis stopped may have run
 * before SIGSTOP with its reply not yet written; that reply comes after the limiter's 10 s wait, so the request was
 * decided without Redis and nothing refunds it. Each client sends one request at a time, so each route may hold one
 * such check more (a token, the quota's count, a token with its concurrency slot, a reservation of 5, a lease), never
 * more: the checks sent during the pause (hundreds) stay refused by their deadline.
 * <ul>
 * <li>Usage: each request reserves 5 tokens and its answer reports 3, so Redis holds 3 per request Redis decided
 * (their settled usage), none of the fallback's; in the 12 s pause, an answer whose settlement the pause caught
 * keeps its reservation of 5 (the settlement is refused past its deadline, 9 s after it was sent): the request under
 * way when Redis stopped, and the one before it, whose settlement is sent once its answer is written, while the client
 * already sends the next request (at most these two).</li>
 * <li>Lease (10 tokens at most, lasting 5 s): an instance takes tokens from Redis ahead of the requests that spend
 * them, so the requests with RateLimit fields are those Redis decided and those a lease answered. What "exactly"
 * means there: the last RateLimit field's remaining count (Redis' own count, as of the last lease call, plus the
 * lease's unspent tokens) is the capacity less those requests; and Redis holds them plus that one lease's unspent
 * tokens (0 to 10, which count as spent at its end), nothing else. A lease call Redis runs late takes nothing; one it
 * applied late would take its request's token and a whole lease that no request spends. In the 12 s pause, a lease
 * call whose reply was lost (above) took a whole lease (0 to 10 more in Redis' count and in what it holds).</li>
 * </ul>
 */
@ActiveProfiles("late-redis-it")
class LateRedisAnswerRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	private static final long HOUR_MICROS = 3_600_000_000L;

	private static final long CAPACITY = 10_000;

	/** Most tokens one lease of group {@code leased} holds (0.1% of its capacity). */
	private static final long LEASE_BUDGET = 10;

	/**
	 * Runs of the test so far: each leases as a client of its own (by address), since the instance keeps a client's
	 * lease across tests, while the buckets are emptied before each.
	 */
	private static final AtomicInteger RUNS = new AtomicInteger();

	private static final BucketKeys KEYS = new BucketKeys("rl");

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@ParameterizedTest(name = "Redis paused {0} ms")
	@ValueSource(ints = { 500, 2_000, 12_000 })
	void requestsDecidedWithoutRedisTakeNothingThereHoweverLateItAnswers(int pauseMillis) throws Exception {
		String leasedIp = "127.0.1." + RUNS.incrementAndGet();
		List<SteadyTraffic> traffic = List.of(traffic("/rate/x", "key-one", "127.0.0.31"),
				traffic("/quota/x", "key-one", "127.0.0.32"), traffic("/conc/x", "key-one", "127.0.0.33"),
				traffic("/auth/login", null, "127.0.0.34"), traffic("/v1/header?used=3", "key-one", "127.0.0.35"),
				traffic("/leased/x", null, leasedIp));
		traffic.forEach(SteadyTraffic::start);
		try {
			await().atMost(Duration.ofSeconds(20))
				.until(() -> traffic.stream().allMatch((t) -> t.fromRedis() >= 3));
			redis.pause();
			try {
				long paused = System.nanoTime();
				int[] withoutRedis = traffic.stream().mapToInt(LateRedisAnswerRoutesIntegrationTest::withoutRedis).toArray();
				// every route had a request decided without Redis, and the pause lasted its length
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
					for (int i = 0; i < withoutRedis.length; i++) {
						if (withoutRedis(traffic.get(i)) == withoutRedis[i]) {
							return false;
						}
					}
					return System.nanoTime() - paused >= Duration.ofMillis(pauseMillis).toNanos();
				});
			}
			finally {
				redis.resume();
			}
			int[] fromRedis = traffic.stream().mapToInt(SteadyTraffic::fromRedis).toArray();
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				for (int i = 0; i < fromRedis.length; i++) {
					if (traffic.get(i).fromRedis() <= fromRedis[i]) {
						return false;
					}
				}
				return true;
			});
		}
		finally {
			SteadyTraffic.stopAll(traffic);
		}
		System.out.println("Redis paused " + pauseMillis + " ms: " + traffic);
		assertThat(traffic).allSatisfy((t) -> assertThat(withoutRedis(t)).as(t.toString()).isPositive());
		assertThat(traffic.get(3).failedClosed()).as("503 on the login route").isPositive();
		// every figure checked, every mismatch reported; lost: the one check per client that, in a pause beyond the
		// limiter's wait for a script's reply (10 s), Redis may have run just before it stopped, its reply lost
		long lost = (pauseMillis > 10_000) ? 1 : 0;
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> SoftAssertions.assertSoftly((soft) -> {
			soft.assertThat(tokensTaken("rate", 0)).as("token bucket")
				.isBetween((long) traffic.get(0).fromRedis(), traffic.get(0).fromRedis() + lost);
			soft.assertThat(quotaUsed()).as("quota")
				.isBetween((long) traffic.get(1).fromRedis(), traffic.get(1).fromRedis() + lost);
			long concBeyond = tokensTaken("conc", 0) - traffic.get(2).fromRedis();
			soft.assertThat(concBeyond).as("bucket beside the concurrency limit, beyond the requests Redis decided")
				.isBetween(0L, lost);
			// an acquire whose reply was lost took its token and its slot together
			soft.assertThat(slotsHeld("conc")).as("concurrency slots").isEqualTo(concBeyond);
			soft.assertThat(tokensTaken("login", 0)).as("critical login route")
				.isBetween((long) traffic.get(3).fromRedis(), traffic.get(3).fromRedis() + lost);
			// a settlement Redis' pause catches is refused past its deadline (9 s) when the pause outlasts the store's
			// wait for its reply (10 s), and its reservation (5) stays charged, as documented: the settlement of the
			// request under way when Redis stopped, or of the one before it (sent once that answer was written, as
			// the client sends its next request, so that request's check may reach Redis first); one check lost as
			// above keeps its whole reservation (5)
			long settled = 3L * traffic.get(4).fromRedis();
			long refusedSettlements = (pauseMillis > 9_000) ? 2 * (5 - 3) : 0;
			soft.assertThat(tokensTaken("usage", 0)).as("usage limit: 3 tokens settled per request Redis decided")
				.isBetween(settled, settled + refusedSettlements + lost * 5);
			SteadyTraffic leased = traffic.get(5);
			// a lease call whose reply was lost took a whole lease that no request spends
			soft.assertThat(lastRemaining(leased)).as("the last remaining count of the leased route")
				.isBetween(CAPACITY - leased.fromRedis() - lost * LEASE_BUDGET, CAPACITY - leased.fromRedis());
			soft.assertThat(leaseTokensTaken(leasedIp) - leased.fromRedis())
				.as("tokens Redis holds taken beyond the requests answered with RateLimit fields: the last lease's unspent")
				.isBetween(0L, LEASE_BUDGET * (1 + lost));
		}));
	}

	/** Tokens a group's token bucket (limit {@code index}) has had taken: its capacity less what it holds. */
	private long tokensTaken(String group, int index) {
		String key = onlyKey(group, ":" + index);
		return Math.round(CAPACITY - StoredTokens.of(redis::command, key, CAPACITY, 1, HOUR_MICROS));
	}

	/** Tokens the leased group's bucket of a client (by address) has had taken, leased ones included. */
	private static long leaseTokensTaken(String ip) {
		PlanLimits limits = new PlanLimits("anonymous", "leased",
				List.of(new LimitDefinition("x", CAPACITY, 1, Duration.ofHours(1))));
		String key = KEYS.keysFor(new ClientKey(ClientKey.Kind.IP, ip, "anonymous"), limits).get(0);
		return Math.round(CAPACITY - StoredTokens.of(redis::command, key, CAPACITY, 1, HOUR_MICROS));
	}

	private long quotaUsed() {
		String key = onlyKey("quota", ":0:q");
		String used = (key != null) ? redis.command("HGET", key, "c") : null;
		return (used != null && !used.isEmpty()) ? Long.parseLong(used.trim()) : 0;
	}

	private long slotsHeld(String group) {
		String key = onlyKey(group, ":1:cc");
		return (key != null) ? Long.parseLong(redis.command("ZCARD", key).trim()) : 0;
	}

	/** The one key of a group whose name ends in <code>}</code>{@code end} (any client), or {@code null}. */
	private static String onlyKey(String group, String end) {
		List<String> found = new ArrayList<>();
		for (String key : redis.command("KEYS", "rl:{" + group + "|*").split("\n")) {
			if (key.trim().endsWith("}" + end)) {
				found.add(key.trim());
			}
		}
		assertThat(found).as("keys of group %s ending in %s", group, end).hasSizeLessThanOrEqualTo(1);
		return found.isEmpty() ? null : found.get(0);
	}

	/**
	 * One client (by address) sending requests to one route, one after another: withoutRedis, those decided by the
	 * local fallback (no RateLimit fields) or failed closed (503).
	 */
	private SteadyTraffic traffic(String path, String apiKey, String sourceIp) {
		WebTestClient client = clientFrom(sourceIp);
		return new SteadyTraffic(path, () -> {
			WebTestClient.RequestHeadersSpec<?> request = client.get().uri(path);
			if (apiKey != null) {
				request = request.header("X-API-Key", apiKey);
			}
			EntityExchangeResult<byte[]> result = request.exchange().expectBody().returnResult();
			return new SteadyTraffic.Answer(result.getStatus().value(),
					result.getResponseHeaders().getFirst("RateLimit"));
		});
	}

	private static int withoutRedis(SteadyTraffic traffic) {
		return traffic.fallback() + traffic.failedClosed();
	}

	/**
	 * The {@code r} parameter of the last RateLimit field ({@code "free-leased";r=9971;t=10440}), -1 before the
	 * first.
	 */
	private static long lastRemaining(SteadyTraffic traffic) {
		String field = traffic.lastRateLimit();
		if (field == null) {
			return -1;
		}
		int start = field.indexOf(";r=") + 3;
		int end = field.indexOf(';', start);
		return Long.parseLong(field.substring(start, (end < 0) ? field.length() : end));
	}

}
