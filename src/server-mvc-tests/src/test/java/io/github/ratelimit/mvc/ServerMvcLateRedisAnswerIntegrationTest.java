package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * On Server MVC too, a request decided without Redis takes nothing in Redis however late Redis answers: Redis paused
 * (SIGSTOP) 2 s, longer than the limiter waits (200 ms) and than Lettuce's command timeout (500 ms), under steady
 * traffic of a token bucket and a calendar quota; afterwards Redis holds exactly what the requests Redis decided
 * (200 with RateLimit fields) took, nothing of the fallback's. A redis-server process of its own, paused for real.
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=200ms", "spring.data.redis.timeout=500ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class ServerMvcLateRedisAnswerIntegrationTest extends ServerMvcRouteIntegrationTest {

	private static final RedisServer ownRedis = RedisServer.start();

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", ownRedis::uri);
	}

	@AfterAll
	static void stopRedis() {
		ownRedis.close();
	}

	@Test
	void requestsDecidedWithoutRedisTakeNothingThereHoweverLateItAnswers() throws Exception {
		ownRedis.flushAll();
		List<Traffic> traffic = List.of(new Traffic("/late/x"), new Traffic("/late-quota/x"));
		traffic.forEach(Traffic::start);
		try {
			await().atMost(Duration.ofSeconds(20))
				.until(() -> traffic.stream().allMatch((t) -> t.fromRedis.get() >= 3));
			ownRedis.pause();
			try {
				long paused = System.nanoTime();
				int[] before = traffic.stream().mapToInt((t) -> t.withoutRedis.get()).toArray();
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
					.until(() -> traffic.get(0).withoutRedis.get() > before[0]
							&& traffic.get(1).withoutRedis.get() > before[1]
							&& System.nanoTime() - paused >= Duration.ofSeconds(2).toNanos());
			}
			finally {
				ownRedis.resume();
			}
			int[] fromRedis = traffic.stream().mapToInt((t) -> t.fromRedis.get()).toArray();
			await().atMost(Duration.ofSeconds(30)).until(() -> traffic.get(0).fromRedis.get() > fromRedis[0]
					&& traffic.get(1).fromRedis.get() > fromRedis[1]);
		}
		finally {
			for (Traffic t : traffic) {
				t.stop();
			}
		}
		System.out.println("Server MVC, Redis paused 2 s: " + traffic);
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			assertThat(tokensTaken(onlyKey("late", ":0"))).as("token bucket")
				.isEqualTo(traffic.get(0).fromRedis.get());
			String quota = onlyKey("late-quota", ":0:q");
			assertThat((quota != null) ? Long.parseLong(ownRedis.command("HGET", quota, "c").trim()) : 0).as("quota")
				.isEqualTo(traffic.get(1).fromRedis.get());
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

	/** One client sending requests to one route, one after another, counting who decided them. */
	private final class Traffic {

		final String path;

		final AtomicInteger fromRedis = new AtomicInteger();

		final AtomicInteger withoutRedis = new AtomicInteger();

		private final AtomicInteger other = new AtomicInteger();

		private final AtomicBoolean stopped = new AtomicBoolean();

		private final Thread thread;

		Traffic(String path) {
			this.path = path;
			this.thread = new Thread(this::send, "traffic " + path);
			this.thread.setDaemon(true);
		}

		void start() {
			this.thread.start();
		}

		void stop() throws InterruptedException {
			this.stopped.set(true);
			this.thread.join(Duration.ofSeconds(20).toMillis());
		}

		private void send() {
			while (!this.stopped.get()) {
				HttpResponse<String> response = get(this.path, "X-API-Key", "key-one");
				boolean fields = response.headers().firstValue("RateLimit").isPresent();
				if (response.statusCode() == 200) {
					(fields ? this.fromRedis : this.withoutRedis).incrementAndGet();
				}
				else {
					this.other.incrementAndGet();
				}
			}
		}

		@Override
		public String toString() {
			return this.path + " fromRedis=" + this.fromRedis + " withoutRedis=" + this.withoutRedis + " other="
					+ this.other;
		}

	}

}
