package io.github.ratelimit.gateway.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the token bucket Lua script itself against a real Redis. Time is controlled on the Redis side: the script's
 * single {@code redis.call('TIME')} is replaced by a fixed time, so hours can pass in a test; everything else is the
 * script as shipped.
 */
@ExtendWith(RedisExtension.class)
class TokenBucketScriptTest {

	private static final long SECOND = 1_000_000L;

	private static final String SCRIPT = load();

	private TestRedis redis;

	private long nowMicros = 1_750_000_000L * SECOND;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.redis = redis;
		redis.flushAll();
	}

	@Test
	void oneTokenPerMinuteDeniesWithExactRetryAfterAndAllowsAfterIt() {
		// capacity 1, 1 token per 60 s: t=0 allowed, t=1 s denied (59 s), t=59 s denied (1 s), t=61 s allowed
		Limit limit = new Limit(1, 1, 60 * SECOND);
		assertThat(run(at(0), 1, "b", limit).allowed()).isTrue();
		Result at1 = run(at(1), 1, "b", limit);
		assertThat(at1.allowed()).isFalse();
		assertThat(at1.retryAfterMs(0)).isEqualTo(59_000);
		Result at59 = run(at(59), 1, "b", limit);
		assertThat(at59.allowed()).isFalse();
		assertThat(at59.retryAfterMs(0)).isEqualTo(1_000);
		assertThat(run(at(61), 1, "b", limit).allowed()).isTrue();
	}

	@Test
	void waitingExactlyRetryAfterSucceeds() {
		// 3 tokens per 7 s, capacity 2: awkward fractions; after each denial, waiting exactly retry-after succeeds
		Limit limit = new Limit(2, 3, 7 * SECOND);
		long t = this.nowMicros;
		for (int i = 0; i < 50; i++) {
			Result result = run(t, 1, "b", limit);
			if (!result.allowed()) {
				long waitMs = result.retryAfterMs(0);
				assertThat(waitMs).isPositive();
				Result after = run(t + waitMs * 1000, 1, "b", limit);
				assertThat(after.allowed()).as("allowed after waiting %d ms", waitMs).isTrue();
				t += waitMs * 1000;
			}
			t += 123_457; // 0.123457 s between requests
		}
	}

	@Test
	void deniedRequestConsumesNothingFromAnyLimit() {
		Limit perSecond = new Limit(10, 10, SECOND);
		Limit tight = new Limit(1, 1, 60 * SECOND);
		assertThat(run(at(0), 1, "b", perSecond, tight).allowed()).isTrue();
		Result denied = run(at(0), 1, "b", perSecond, tight);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.satisfied(0)).isTrue();
		assertThat(denied.satisfied(1)).isFalse();
		assertThat(denied.remaining(0)).isEqualTo(9); // not consumed by the denial
		String stored = this.redis.command("HGET", "b:0", "tk");
		assertThat(Double.parseDouble(stored)).isEqualTo(9.0);
	}

	@Test
	void deniedRequestWritesNothing() {
		Limit limit = new Limit(1, 1, 60 * SECOND);
		run(at(0), 1, "b", limit);
		String before = this.redis.command("HGET", "b:0", "ts");
		run(at(5), 1, "b", limit);
		assertThat(this.redis.command("HGET", "b:0", "ts")).isEqualTo(before);
	}

	@Test
	void hugeBucketAfterLongIdleStaysExact() {
		// capacity 1,000,000 refilling 1,000,000 per minute: consume 1, 12 hours pass, consume 1
		Limit limit = new Limit(1_000_000, 1_000_000, 60 * SECOND);
		Result first = run(at(0), 1, "b", limit);
		assertThat(first.remaining(0)).isEqualTo(999_999);
		Result later = run(at(12 * 3600), 1, "b", limit);
		assertThat(later.allowed()).isTrue();
		assertThat(later.remaining(0)).isEqualTo(999_999);
		assertThat(later.resetMs(0)).isBetween(0L, 60L);
	}

	@Test
	void capacityOf2To53NeverOverflows() {
		long max = 1L << 53;
		Limit limit = new Limit(max, 1, 86_400 * SECOND);
		Result first = run(at(0), max, "b", limit);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining(0)).isZero();
		Result denied = run(at(1), 1, "b", limit);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMs(0)).isBetween(86_398_000L, 86_400_000L);
		assertThat(denied.resetMs(0)).isPositive().isLessThanOrEqualTo(max);
		assertThat(first.ttlMillis()).isPositive();
		Result decades = run(at(3600L * 24 * 365 * 100), 1, "b", limit);
		assertThat(decades.allowed()).isTrue();
		assertThat(decades.remaining(0)).isBetween(0L, max);
	}

	@Test
	void fastRateAdmitsCapacityPlusRefill() {
		// 2,000 per second, capacity 2,000: 2,500 requests at one instant admit exactly the capacity
		Limit limit = new Limit(2_000, 2_000, SECOND);
		int burst = 0;
		for (int i = 0; i < 2_500; i++) {
			if (run(at(0), 1, "c", limit).allowed()) {
				burst++;
			}
		}
		assertThat(burst).isEqualTo(2_000);
		// 3,000 requests spread over 0.5 s on a full bucket admit the capacity plus the refill
		int spread = 0;
		long step = 500_000 / 3_000;
		for (int i = 0; i < 3_000; i++) {
			if (run(at(100) + i * step, 1, "d", limit).allowed()) {
				spread++;
			}
		}
		double theory = 2_000 + 2_000 * (2_999 * step) / 1e6;
		assertThat((double) spread).isBetween(theory - 1, theory + 1);
	}

	@Test
	void shrunkCapacityClampsStoredTokens() {
		run(at(0), 1, "b", new Limit(100, 1, SECOND));
		Result shrunk = run(at(0), 1, "b", new Limit(10, 1, SECOND));
		assertThat(shrunk.allowed()).isTrue();
		assertThat(shrunk.remaining(0)).isEqualTo(9);
	}

	@Test
	void everyWrittenKeyExpiresWhenItsBucketIsFullAgain() {
		Limit limit = new Limit(10, 1, SECOND);
		long ttl = run(at(0), 3, "b", limit).ttlMillis();
		assertThat(ttl).isBetween(2_900L, 3_000L);
	}

	@Test
	void corruptStateCountsAsFullBucket() {
		this.redis.command("HSET", "b:0", "tk", "nan", "ts", "garbage");
		Result result = run(at(0), 1, "b", new Limit(5, 1, SECOND));
		assertThat(result.allowed()).isTrue();
		assertThat(result.remaining(0)).isEqualTo(4);
	}

	@Test
	void clockSteppingBackNeverGoesNegative() {
		Limit limit = new Limit(5, 1, SECOND);
		run(at(100), 5, "b", limit);
		Result earlier = run(at(50), 1, "b", limit);
		assertThat(earlier.allowed()).isFalse();
		assertThat(earlier.remaining(0)).isZero();
		assertThat(earlier.retryAfterMs(0)).isEqualTo(1_000);
	}

	private long at(long seconds) {
		return this.nowMicros + seconds * SECOND;
	}

	private Result run(long timeMicros, long cost, String keyBase, Limit... limits) {
		// Simulated time: TIME is replaced by a fixed time. Keys would still expire in real time, which could
		// refill a bucket behind the simulated clock's back, so the TTL the script sets is recorded in a hash
		// field instead of applied.
		String script = SCRIPT.replace("redis.call('TIME')",
				"{'" + (timeMicros / SECOND) + "', '" + (timeMicros % SECOND) + "'}")
			.replace("redis.call('PEXPIRE', KEYS[i],", "redis.call('HSET', KEYS[i], 'test-ttl',");
		assertThat(script).doesNotContain("redis.call('TIME')").doesNotContain("redis.call('PEXPIRE'");
		List<String> command = new ArrayList<>(List.of("EVAL", script, Integer.toString(limits.length)));
		for (int i = 0; i < limits.length; i++) {
			command.add(keyBase + ":" + i);
		}
		command.add(RedisRateLimitStore.CHECK);
		command.add(Long.toString(cost));
		command.add(Integer.toString(limits.length));
		for (Limit limit : limits) {
			command.add("tb");
			command.add(Long.toString(limit.capacity));
			command.add(Long.toString(limit.refillTokens));
			command.add(Long.toString(limit.periodMicros));
		}
		String reply = this.redis.command(command.toArray(String[]::new));
		long[] values = Arrays.stream(reply.split("\n")).mapToLong(Long::parseLong).toArray();
		assertThat(values).hasSize(1 + 4 * limits.length);
		String ttl = this.redis.command("HGET", keyBase + ":0", "test-ttl");
		return new Result(values, (ttl != null) ? Long.parseLong(ttl) : -1);
	}

	private static String load() {
		try (InputStream in = TokenBucketScriptTest.class.getClassLoader()
			.getResourceAsStream(RedisRateLimitStore.SCRIPT_LOCATION)) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private record Limit(long capacity, long refillTokens, long periodMicros) {
	}

	private record Result(long[] values, long ttlMillis) {

		boolean allowed() {
			return this.values[0] == 1;
		}

		boolean satisfied(int i) {
			return this.values[1 + 4 * i] == 1;
		}

		long remaining(int i) {
			return this.values[2 + 4 * i];
		}

		long retryAfterMs(int i) {
			return this.values[3 + 4 * i];
		}

		long resetMs(int i) {
			return this.values[4 + 4 * i];
		}

	}

}
