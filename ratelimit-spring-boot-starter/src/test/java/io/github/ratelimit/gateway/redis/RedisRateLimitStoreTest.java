package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.test.redis.TestRedis;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's side of the script contract, over both executors ({@link SpringDataScriptExecutor} and
 * {@link LettuceScriptExecutor}) against a real Redis: the store sends each limit's algorithm with its numbers,
 * names each algorithm's keys apart, decodes the reply, refunds and resets every kind of state.
 */
class RedisRateLimitStoreTest {

	/** Longest wait for an answer from the local Redis: a hang bound, generous for a first call on a loaded machine. */
	private static final long ANSWER_BOUND_SECONDS = 30;

	private static final TestRedis testRedis = TestRedis.shared();

	private static LettuceConnectionFactory connectionFactory;

	/** Through Spring Data Redis' reactive template ({@link SpringDataScriptExecutor}). */
	private static RedisRateLimitStore templateLimiter;

	/** On a Lettuce connection of its own ({@link LettuceScriptExecutor}, what the auto-configuration uses). */
	private static RedisRateLimitStore lettuceLimiter;

	private final ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, "hashed-client", "free");

	private final PlanLimits mixed = new PlanLimits("free", "search",
			List.of(new LimitDefinition("free-search-1s", 10, 10, Duration.ofSeconds(1)),
					LimitDefinition.window("free-search-1m", Algorithm.SLIDING_WINDOW_LOG, 3, Duration.ofMinutes(1)),
					LimitDefinition.window("free-search-1h", Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofHours(1)),
					LimitDefinition.window("free-search-1d", Algorithm.FIXED_WINDOW, 1000, Duration.ofDays(1))));

	@BeforeAll
	static void connect() {
		connectionFactory = StartedConnectionFactory.to(testRedis.host(), testRedis.port());
		templateLimiter = new RedisRateLimitStore(new SpringDataScriptExecutor(connectionFactory), new BucketKeys("rl"));
		lettuceLimiter = new RedisRateLimitStore(new LettuceScriptExecutor(connectionFactory), new BucketKeys("rl"));
	}

	private static RedisRateLimitStore limiter(String path) {
		return "lettuce".equals(path) ? lettuceLimiter : templateLimiter;
	}

	@AfterAll
	static void disconnect() {
		if (lettuceLimiter != null) {
			lettuceLimiter.destroy();
		}
		if (connectionFactory != null) {
			connectionFactory.destroy();
		}
	}

	@BeforeEach
	void flush() {
		testRedis.flushAll();
	}

	@Test
	void aReservationIsSettledInOneCallOnceAndInNoneWhenNothingChanges() throws Exception {
		List<String> operations = new CopyOnWriteArrayList<>();
		RedisScriptExecutor recording = new RedisScriptExecutor() {

			private final RedisScriptExecutor executor = new SpringDataScriptExecutor(connectionFactory);

			@Override
			public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
				operations.add(new String(args[0], StandardCharsets.US_ASCII));
				return this.executor.eval(script, keys, args);
			}

			@Override
			public CompletableFuture<Long> delete(byte[][] keys) {
				return this.executor.delete(keys);
			}

			@Override
			public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
				return this.executor.removeFromSortedSet(key, member);
			}

		};
		RedisRateLimitStore store = new RedisRateLimitStore(recording, new BucketKeys("rl"));
		PlanLimits chat = new PlanLimits("free", "chat",
				List.of(new LimitDefinition("free-chat-1h", 10, 10, Duration.ofHours(1)),
						new LimitDefinition("free-chat-tokens-1h", 1_000, 1_000, Duration.ofHours(1)).withUnit("tokens")));
		PlanLimits requestsOnly = new PlanLimits("anonymous", "chat",
				List.of(new LimitDefinition("anonymous-chat-1h", 10, 10, Duration.ofHours(1))));
		RateLimitDecision exact = store.tryConsume(this.client, chat, Cost.reserving(1, 300))
			.get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS);
		RateLimitDecision plain = store.tryConsume(this.client, requestsOnly, Cost.reserving(1, 300))
			.get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS);
		RateLimitDecision refunded = store.tryConsume(this.client, chat, Cost.reserving(1, 300))
			.get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(store.tryConsume(this.client, chat, 1).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).reservation())
			.as("a cost that does not reserve leaves nothing to settle")
			.isSameAs(Reservation.NONE);
		operations.clear();
		// each answers what the store charged in the end
		assertThat(exact.reservation().settle(300).toCompletableFuture().get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS))
			.as("used what it reserved: nothing changes").isEqualTo(300);
		assertThat(plain.reservation().settle(500).toCompletableFuture().get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS))
			.as("no limit counts usage: nothing changes, no usage charged").isZero();
		assertThat(refunded.reservation().settle(100).toCompletableFuture().get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS))
			.as("200 back: one call").isEqualTo(100);
		assertThat(refunded.reservation().settle(900).toCompletableFuture().get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS))
			.as("ended already").isZero();
		assertThat(operations).containsExactly(RedisRateLimitStore.SETTLE);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(store.tryConsume(this.client, chat, Cost.NONE)
				.get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS)
				.statuses()
				.get(1)
				.remaining()).isBetween(600L, 601L));
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void anAllowedCheckWithAConcurrencyLimitHoldsASlotUntilReleased(String path) throws Exception {
		RedisRateLimitStore store = limiter(path);
		PlanLimits limits = new PlanLimits("free", "reports",
				List.of(new LimitDefinition("free-reports-1h", 10, 10, Duration.ofHours(1)),
						LimitDefinition.concurrency("free-reports-concurrency", 1, Duration.ofSeconds(30))));
		int before = store.heldSlotCount();
		RateLimitDecision first = store.tryConsume(this.client, limits, 1).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(first.allowed()).isTrue();
		assertThat(store.heldSlotCount()).isEqualTo(before + 1);
		assertThat(testRedis.command("ZCARD", "rl:{reports|k:hashed-client}:1:cc")).isEqualTo("1");
		RateLimitDecision second = store.tryConsume(this.client, limits, 1).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(second.allowed()).isFalse();
		assertThat(second.slots()).isSameAs(io.github.ratelimit.gateway.chain.HeldSlots.NONE);
		// a read (the endpoint's) takes no slot and sees the one in flight
		assertThat(store.tryConsume(this.client, limits, 0).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).statuses().get(1).remaining())
			.isZero();
		first.slots().release();
		org.awaitility.Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> testRedis.command("ZCARD", "rl:{reports|k:hashed-client}:1:cc").equals("0"));
		assertThat(store.heldSlotCount()).isEqualTo(before);
		// the hold time was measured for the Retry-After estimate, in the limit's second key
		assertThat(testRedis.command("HEXISTS", "rl:{reports|k:hashed-client}:1:cc:h", "h")).isEqualTo("1");
		assertThat(store.tryConsume(this.client, limits, 1).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).allowed()).isTrue();
	}

	@Test
	void argumentsCarryEachLimitsAlgorithmCodeBeforeItsNumbers() {
		assertThat(RedisRateLimitStore.scriptArguments(this.mixed)).containsExactly("check", "4", "0", "tb", "10", "10",
				"1000000", "1", "swl", "3", "3", "60000000", "1", "swc", "100", "100", "3600000000", "1", "fw", "1000",
				"1000", "86400000000", "1");
	}

	@Test
	void aQuotasRefillPeriodIsTheFourBoundariesAroundTheGatewaysTimeInMicroseconds() {
		PlanLimits limits = new PlanLimits("free", "search", List.of(LimitDefinition.quota("free-search-day", 1000,
				io.github.ratelimit.gateway.limits.QuotaPeriod.of(io.github.ratelimit.gateway.limits.QuotaPeriodUnit.DAY,
						java.time.ZoneId.of("Europe/Berlin")))));
		// 2026-03-29 in Berlin is 23 hours long: it starts at 2026-03-28T23:00Z, ends at 2026-03-29T22:00Z
		assertThat(RedisRateLimitStore.scriptArguments(limits, java.time.Instant.parse("2026-03-29T12:00:00Z")))
			.containsExactly("check", "1", "0", "q", "1000", "1000",
					micros("2026-03-27T23:00:00Z") + "," + micros("2026-03-28T23:00:00Z") + ","
							+ micros("2026-03-29T22:00:00Z") + "," + micros("2026-03-30T22:00:00Z"),
					"1");
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void aQuotaIsReadAndToppedUpOnRedisPeriodThroughEitherExecutor(String path) throws Exception {
		RedisRateLimitStore store = limiter(path);
		io.github.ratelimit.gateway.limits.QuotaPeriod days = io.github.ratelimit.gateway.limits.QuotaPeriod
			.of(io.github.ratelimit.gateway.limits.QuotaPeriodUnit.DAY, java.time.ZoneOffset.UTC);
		LimitDefinition bucket = new LimitDefinition("free-search-1h", 10, 1, Duration.ofHours(1));
		LimitDefinition quota = LimitDefinition.quota("free-search-day", 3, days);
		PlanLimits limits = new PlanLimits("free", "search", List.of(bucket, quota));
		assertThat(store.tryConsume(this.client, limits, 2).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).allowed()).isTrue();
		assertThat(store.topUp(this.client, limits, quota, 4).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS)).isEqualTo(4);
		List<io.github.ratelimit.gateway.chain.QuotaState> states = store.readQuotas(this.client, limits)
			.get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS);
		// Redis' period: the UTC day that holds Redis' time (the same machine's clock as this test's)
		java.time.Instant redisNow = java.time.Instant
			.ofEpochSecond(Long.parseLong(testRedis.command("TIME").split("\n")[0]));
		assertThat(states).containsExactly(new io.github.ratelimit.gateway.chain.QuotaState(quota, -2,
				days.periodAt(redisNow).start(), days.periodAt(redisNow).end()));
		assertThat(states.get(0).remaining()).isEqualTo(5);
		// bad arguments fail before any call
		assertThat(store.topUp(this.client, limits, bucket, 1)).failsWithin(Duration.ZERO)
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(IllegalArgumentException.class)
			.withMessage("'free-search-1h' is not a quota of plan 'free' in group 'search'");
		assertThat(store.topUp(this.client, limits, quota, (1L << 53) + 1)).failsWithin(Duration.ZERO)
			.withThrowableThat()
			.havingRootCause()
			.withMessage("a top-up is 1 to 9007199254740992 tokens, was 9007199254740993");
		assertThat(store.readQuotas(this.client, this.mixed).get(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS)).isEmpty();
	}

	private static long micros(String instant) {
		return java.time.Instant.parse(instant).toEpochMilli() * 1000;
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void eachAlgorithmHasItsOwnKeyInTheClientsSlot(String path) {
		assertThat(new BucketKeys("rl").keysFor(this.client, this.mixed)).containsExactly(
				"rl:{search|k:hashed-client}:0", "rl:{search|k:hashed-client}:1:swl",
				"rl:{search|k:hashed-client}:2:swc", "rl:{search|k:hashed-client}:3:fw");
		// the token bucket refills in a minute here (10 per 1 s would expire its key 100 ms after the check: sooner
		// than a loaded machine reads the TTL)
		PlanLimits slowRefill = new PlanLimits("free", "search", List.of(
				new LimitDefinition("free-search-1s", 10, 10, Duration.ofMinutes(1)), this.mixed.limits().get(1),
				this.mixed.limits().get(2), this.mixed.limits().get(3)));
		limiter(path).tryConsume(this.client, slowRefill, 1).orTimeout(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).join();
		assertThat(testRedis.command("TYPE", "rl:{search|k:hashed-client}:0")).isEqualTo("string");
		assertThat(testRedis.command("TYPE", "rl:{search|k:hashed-client}:1:swl")).isEqualTo("zset");
		assertThat(testRedis.command("TYPE", "rl:{search|k:hashed-client}:2:swc")).isEqualTo("hash");
		assertThat(testRedis.command("TYPE", "rl:{search|k:hashed-client}:3:fw")).isEqualTo("hash");
		for (String key : new BucketKeys("rl").keysFor(this.client, this.mixed)) {
			assertThat(Long.parseLong(testRedis.command("PTTL", key))).as("TTL of %s", key).isPositive();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void mixedAlgorithmsAreCheckedAllOrNothing(String path) {
		for (int i = 0; i < 3; i++) {
			assertThat(consume(path, 1).allowed()).isTrue();
		}
		RateLimitDecision denied = consume(path, 1);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-search-1m");
		assertThat(denied.retryAfterMillis()).isBetween(59_000L, 60_000L);
		// the 10 per second bucket refills while a loaded machine runs the four calls: 7 left, or a few more
		assertThat(denied.statuses().get(0).remaining()).isBetween(7L, 10L);
		assertThat(denied.statuses().subList(1, 4)).extracting(LimitStatus::remaining).containsExactly(0L, 97L, 997L);
		assertThat(testRedis.command("HGET", "rl:{search|k:hashed-client}:3:fw", "c")).isEqualTo("3");
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void refundGivesBackEveryAlgorithmsTokens(String path) {
		consume(path, 2);
		limiter(path).refund(this.client, this.mixed, Cost.tokens(2)).orTimeout(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).join();
		RateLimitDecision read = limiter(path).tryConsume(this.client, this.mixed, 0).orTimeout(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).join();
		assertThat(read.statuses()).extracting(LimitStatus::remaining).containsExactly(10L, 3L, 100L, 1000L);
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void resetDeletesEveryAlgorithmsState(String path) {
		consume(path, 3);
		assertThat(limiter(path).reset(this.client, this.mixed).orTimeout(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).join()).isEqualTo(4);
		assertThat(consume(path, 3).allowed()).isTrue();
	}

	private RateLimitDecision consume(String path, long cost) {
		return limiter(path).tryConsume(this.client, this.mixed, cost).orTimeout(ANSWER_BOUND_SECONDS, TimeUnit.SECONDS).join();
	}

}
