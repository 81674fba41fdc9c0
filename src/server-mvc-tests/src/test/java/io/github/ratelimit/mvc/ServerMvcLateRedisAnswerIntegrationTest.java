package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.test.SteadyTraffic;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * On Server MVC too, a request decided without Redis takes nothing in Redis however late Redis answers: Redis paused
 * (SIGSTOP) 2 s, longer than the limiter waits (200 ms) and than Lettuce's command timeout (500 ms), under steady
 * traffic of a token bucket and a calendar quota; afterwards Redis holds exactly what the requests Redis decided
 * (200 with RateLimit fields) took, nothing of the fallback's. The redis-server process of the own-Redis tests, paused for real.
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=200ms", "spring.data.redis.timeout=500ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class ServerMvcLateRedisAnswerIntegrationTest extends ServerMvcOwnRedisIntegrationTest {

	@Test
	void requestsDecidedWithoutRedisTakeNothingThereHoweverLateItAnswers() throws Exception {
		ownRedis.flushAll();
		List<SteadyTraffic> traffic = List.of(traffic("/late/x"), traffic("/late-quota/x"));
		traffic.forEach(SteadyTraffic::start);
		try {
			await().atMost(Duration.ofSeconds(20))
				.until(() -> traffic.stream().allMatch((t) -> t.fromRedis() >= 3));
			ownRedis.pause();
			try {
				long paused = System.nanoTime();
				int[] before = traffic.stream().mapToInt(SteadyTraffic::fallback).toArray();
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
					.until(() -> traffic.get(0).fallback() > before[0]
							&& traffic.get(1).fallback() > before[1]
							&& System.nanoTime() - paused >= Duration.ofSeconds(2).toNanos());
			}
			finally {
				ownRedis.resume();
			}
			int[] fromRedis = traffic.stream().mapToInt(SteadyTraffic::fromRedis).toArray();
			await().atMost(Duration.ofSeconds(30)).until(() -> traffic.get(0).fromRedis() > fromRedis[0]
					&& traffic.get(1).fromRedis() > fromRedis[1]);
		}
		finally {
			SteadyTraffic.stopAll(traffic);
		}
		System.out.println("Server MVC, Redis paused 2 s: " + traffic);
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			assertThat(tokensTaken(onlyKey("late", ":0"))).as("token bucket")
				.isEqualTo(traffic.get(0).fromRedis());
			String quota = onlyKey("late-quota", ":0:q");
			assertThat((quota != null) ? Long.parseLong(ownRedis.command("HGET", quota, "c").trim()) : 0).as("quota")
				.isEqualTo(traffic.get(1).fromRedis());
		});
	}

	/** Tokens taken from a token bucket of capacity 10,000 refilled 1 an hour (its GCRA state, at Redis' time). */
	private static long tokensTaken(String key) {
		String value = (key != null) ? ownRedis.command("GET", key) : null;
		if (value == null || value.isEmpty()) {
			return 0;
		}
		String[] time = ownRedis.command("TIME").split("\n");
		long now = Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
		long tat = Long.parseLong(value.trim().split(":")[0]);
		return Math.round(Math.max(0, tat - now) / 3_600_000_000.0);
	}

	private static String onlyKey(String group, String end) {
		List<String> found = new ArrayList<>();
		for (String key : ownRedis.command("KEYS", "rl:{" + group + "|*").split("\n")) {
			if (key.trim().endsWith("}" + end)) {
				found.add(key.trim());
			}
		}
		assertThat(found).hasSizeLessThanOrEqualTo(1);
		return found.isEmpty() ? null : found.get(0);
	}

	/**
	 * One client sending requests to one route, one after another: withoutRedis, those decided by the local fallback
	 * (200 without RateLimit fields).
	 */
	private SteadyTraffic traffic(String path) {
		return new SteadyTraffic(path, () -> {
			HttpResponse<String> response = get(path, "X-API-Key", "key-one");
			return new SteadyTraffic.Answer(response.statusCode(),
					response.headers().firstValue("RateLimit").orElse(null));
		});
	}

}
