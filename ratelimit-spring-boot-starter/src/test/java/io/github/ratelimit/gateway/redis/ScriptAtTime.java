package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.test.redis.TestRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the shipped rate limit script (a check or a refund) against a real Redis with Redis-side time replaced: the
 * script's single {@code redis.call('TIME')} reads the hash {@value #TIME_HASH} instead, which the test sets before
 * each call, so hours can pass in a test (and the script text stays one, which Redis compiles once). Keys would still
 * expire in real time, which could change state behind the simulated clock's back, so the TTL the script sets is
 * recorded in the hash {@value #TTL_HASH} (field = key) instead of applied. Everything else is the script as shipped,
 * with the same KEYS and ARGV as {@link RedisRateLimitStore} builds.
 *
 * <p>The script tests' fixture: {@code @RegisterExtension final ScriptAtTime script = new ScriptAtTime();} runs on
 * the shared test Redis, emptied before each test.
 */
final class ScriptAtTime implements BeforeEachCallback {

	static final long SECOND = 1_000_000L;

	static final long MINUTE = 60 * SECOND;

	/** A window-aligned Redis time (a multiple of one day), microseconds: where the tests' clocks start. */
	static final long T0 = 1_749_945_600L * SECOND;

	/** Hash holding the TTL (ms) the script set on each key, by key. */
	static final String TTL_HASH = "test-ttl";

	/** Hash holding the Redis time the script reads instead of {@code TIME}: fields {@code s} and {@code us}. */
	static final String TIME_HASH = "test-time";

	/** The script as shipped. */
	static final String SCRIPT = LuaScript.rateLimit().text();

	/** The shipped script with Redis TIME read from {@value #TIME_HASH} and TTLs recorded instead of applied. */
	private static final String SCRIPT_AT_TEST_TIME = atTestTime();

	private final TestRedis redis;

	/** On the shared test Redis, emptied before each test (as an extension). */
	ScriptAtTime() {
		this(TestRedis.shared());
	}

	ScriptAtTime(TestRedis redis) {
		this.redis = redis;
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.redis.flushAll();
	}

	/** The Redis the script runs on. */
	TestRedis redis() {
		return this.redis;
	}

	/**
	 * Run the check at a time.
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param cost tokens
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits
	 * @return the reply
	 */
	Result check(long timeMicros, long cost, String keyBase, Limit... limits) {
		String reply = this.redis.command(command(at(timeMicros), RedisRateLimitStore.CHECK, cost, List.of(), keyBase,
				limits));
		return new Result(values(reply, 1 + 4 * limits.length));
	}

	/**
	 * Run a check at a time, each limit taking its own cost (a limit counting requests and one counting usage).
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param costs tokens taken from each limit, in order
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits
	 * @return the reply
	 */
	Result check(long timeMicros, long[] costs, String keyBase, Limit... limits) {
		String reply = this.redis.command(command(at(timeMicros), RedisRateLimitStore.CHECK, costs, List.of(), keyBase,
				limits));
		return new Result(values(reply, 1 + 4 * limits.length));
	}

	/**
	 * Settle a reservation at a time: each limit charged its difference (negative: given back).
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param differences tokens charged to each limit, in order
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits
	 * @return per limit, the tokens it took (negative: gave back)
	 */
	long[] settle(long timeMicros, long[] differences, String keyBase, Limit... limits) {
		String reply = this.redis.command(command(at(timeMicros), RedisRateLimitStore.SETTLE, differences, List.of(),
				keyBase, limits));
		long[] values = Arrays.stream(reply.split("\n")).mapToLong(Long::parseLong).toArray();
		assertThat(values).hasSize(limits.length);
		return values;
	}

	/**
	 * Settle a reservation at a time with a deadline ({@code settle}'s third value).
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param deadlineMicros the deadline, Redis time, microseconds since the epoch (0: none)
	 * @param differences tokens charged to each limit, in order
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits
	 * @return per limit, the tokens it took (negative: gave back); empty when refused past the deadline (expired)
	 */
	long[] settle(long timeMicros, long deadlineMicros, long[] differences, String keyBase, Limit... limits) {
		String[] command = command(at(timeMicros), RedisRateLimitStore.SETTLE, differences, List.of(), keyBase,
				limits);
		command[3 + Integer.parseInt(command[2]) + 2] = Long.toString(deadlineMicros);
		String reply = this.redis.command(command);
		return reply.isBlank() ? new long[0]
				: Arrays.stream(reply.split("\n")).mapToLong(Long::parseLong).toArray();
	}

	/**
	 * Top quotas up at a time ({@code topup}): each limit given its tokens (0 for a limit other than a quota).
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param tokens tokens granted to each limit, in order
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits
	 * @return the number of limits changed
	 */
	long topUp(long timeMicros, long[] tokens, String keyBase, Limit... limits) {
		return Long.parseLong(this.redis.command(command(at(timeMicros), RedisRateLimitStore.TOP_UP, tokens,
				List.of(), keyBase, limits)));
	}

	/**
	 * Read the quotas at a time ({@code quota}): per limit its use, its period's start and end (microseconds); 0, 0, 0
	 * for a limit other than a quota.
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits
	 * @return the reply, three values per limit (a use may be negative)
	 */
	long[] quotas(long timeMicros, String keyBase, Limit... limits) {
		String reply = this.redis.command(command(at(timeMicros), RedisRateLimitStore.QUOTA, new long[limits.length],
				List.of(), keyBase, limits));
		long[] values = Arrays.stream(reply.split("\n")).mapToLong(Long::parseLong).toArray();
		assertThat(values).hasSize(3 * limits.length);
		return values;
	}

	/**
	 * Run a check that takes a lease, at a time.
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param cost tokens
	 * @param wanted tokens wanted for the lease
	 * @param durationMicros the lease's duration
	 * @param previous the previous lease given back: granted, unused, end (or {@link #NO_LEASE})
	 * @param keyBase limit i's key is {@code keyBase:i}
	 * @param limits the limits (token buckets)
	 * @return the reply: the check's, then the tokens leased and the lease's end
	 */
	Leased lease(long timeMicros, long cost, long wanted, long durationMicros, long[] previous, String keyBase,
			Limit... limits) {
		List<String> header = List.of(Long.toString(wanted), Long.toString(durationMicros),
				Long.toString(previous[0]), Long.toString(previous[1]), Long.toString(previous[2]));
		String reply = this.redis.command(command(at(timeMicros), RedisRateLimitStore.LEASE, cost, header, keyBase,
				limits));
		long[] values = values(reply, 3 + 4 * limits.length);
		return new Leased(new Result(Arrays.copyOf(values, 1 + 4 * limits.length)), values[1 + 4 * limits.length],
				values[2 + 4 * limits.length]);
	}

	/**
	 * Run a check that takes a slot in every concurrency limit ({@code acquire}), at a time.
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @param cost tokens (a concurrency limit takes one slot whatever the cost; 0 reads)
	 * @param slot the slot's id
	 * @param keyBase limit i's key is {@code keyBase:i}; a concurrency limit's hold statistics {@code keyBase:i:h}
	 * @param limits the limits
	 * @return the reply
	 */
	Result acquire(long timeMicros, long cost, String slot, String keyBase, Limit... limits) {
		String reply = this.redis.command(command(at(timeMicros), RedisRateLimitStore.ACQUIRE, cost, List.of(slot),
				keyBase, limits));
		return new Result(values(reply, 1 + 4 * limits.length));
	}

	/**
	 * Give a request's slot back in every concurrency limit ({@code release}), refunding {@code cost} tokens to the
	 * rate limits, at a time.
	 * @return the number of limits changed
	 */
	long release(long timeMicros, long cost, String slot, String keyBase, Limit... limits) {
		return Long.parseLong(this.redis.command(command(at(timeMicros), RedisRateLimitStore.RELEASE, cost,
				List.of(slot), keyBase, limits)));
	}

	/**
	 * Give back a slot the request never used ({@code abandon}): its hold time is not counted.
	 * @return the number of limits changed
	 */
	long abandon(long timeMicros, long cost, String slot, String keyBase, Limit... limits) {
		return Long.parseLong(this.redis.command(command(at(timeMicros), RedisRateLimitStore.ABANDON, cost,
				List.of(slot), keyBase, limits)));
	}

	/**
	 * The average hold time a concurrency limit keeps for its retry estimate.
	 * @return microseconds, or -1 when none is kept
	 */
	long averageHoldMicros(String keyBase, int i) {
		String average = this.redis.command("HGET", keyBase + ":" + i + ":h", "h");
		return (average != null) ? Long.parseLong(average) : -1;
	}

	/**
	 * Checks one token after the other at a time until a check is denied (at most 1,000).
	 * @return the tokens admitted
	 */
	int drain(long timeMicros, String keyBase, Limit... limits) {
		int admitted = 0;
		while (admitted < 1_000 && check(timeMicros, 1, keyBase, limits).allowed()) {
			admitted++;
		}
		return admitted;
	}

	/** No previous lease. */
	static final long[] NO_LEASE = { 0, 0, 0 };

	/**
	 * Sets the Redis time the next call of the script reads.
	 * @param timeMicros Redis time, microseconds since the epoch
	 * @return the script that reads it (TTLs recorded instead of applied)
	 */
	private String at(long timeMicros) {
		this.redis.command("HSET", TIME_HASH, "s", Long.toString(timeMicros / SECOND), "us",
				Long.toString(timeMicros % SECOND));
		return SCRIPT_AT_TEST_TIME;
	}

	/** The shipped script with Redis TIME read from {@value #TIME_HASH} and TTLs recorded instead of applied. */
	private static String atTestTime() {
		String script = SCRIPT.replace("redis.call('TIME')", "redis.call('HMGET', '" + TIME_HASH + "', 's', 'us')")
			.replace("redis.call('PEXPIRE', KEYS[i],", "redis.call('HSET', '" + TTL_HASH + "', KEYS[i],")
			.replace("redis.call('SET', KEYS[i], value, 'PX',",
					"redis.call('SET', KEYS[i], value); redis.call('HSET', '" + TTL_HASH + "', KEYS[i],");
		assertThat(script).doesNotContain("redis.call('TIME')")
			.doesNotContain("redis.call('PEXPIRE'")
			.doesNotContain("'PX'");
		return script;
	}

	private static long[] values(String reply, int count) {
		long[] values = Arrays.stream(reply.split("\n")).mapToLong(Long::parseLong).toArray();
		assertThat(values).hasSize(count);
		for (long value : values) {
			// no negative value, and nothing that was NaN or infinite in Lua (Redis turns those into huge integers)
			assertThat(value).isBetween(0L, 1L << 53);
		}
		return values;
	}

	/**
	 * Run a refund (at Redis' own time: a refund reads none).
	 * @return the number of limits refunded
	 */
	long refund(long cost, String keyBase, Limit... limits) {
		return Long.parseLong(
				this.redis.command(command(SCRIPT, RedisRateLimitStore.REFUND, cost, List.of(), keyBase, limits)));
	}

	/**
	 * The TTL the last write set on limit i's key.
	 * @return milliseconds, or -1 if no write set one
	 */
	long ttlMillis(String keyBase, int i) {
		String ttl = this.redis.command("HGET", TTL_HASH, keyBase + ":" + i);
		return (ttl != null) ? Long.parseLong(ttl) : -1;
	}

	/** A serialized copy of limit i's key (DUMP), to prove that nothing changed; {@code null} if missing. */
	String dump(String keyBase, int i) {
		String type = this.redis.command("TYPE", keyBase + ":" + i);
		return switch (type) {
			case "none" -> null;
			case "hash" -> this.redis.command("HGETALL", keyBase + ":" + i);
			case "string" -> this.redis.command("GET", keyBase + ":" + i);
			case "zset" -> this.redis.command("ZRANGE", keyBase + ":" + i, "0", "-1", "WITHSCORES");
			default -> throw new IllegalStateException("unexpected type " + type);
		};
	}

	private static String[] command(String script, String operation, long cost, List<String> header, String keyBase,
			Limit... limits) {
		long[] costs = new long[limits.length];
		for (int i = 0; i < limits.length; i++) {
			boolean slot = limits[i].code().equals("cc");
			costs[i] = !slot ? cost : (operation.equals(RedisRateLimitStore.ACQUIRE) && cost > 0) ? 1 : 0;
		}
		return command(script, operation, costs, header, keyBase, limits);
	}

	/** The command of a call giving each limit its own cost (the script's fifth value per limit). */
	private static String[] command(String script, String operation, long[] costs, List<String> header,
			String keyBase, Limit... limits) {
		List<String> command = new ArrayList<>(List.of("EVAL", script, Integer.toString(limits.length)));
		for (int i = 0; i < limits.length; i++) {
			command.add(keyBase + ":" + i);
		}
		for (int i = 0; i < limits.length; i++) {
			if (limits[i].code().equals("cc")) {
				command.add(keyBase + ":" + i + ":h");
			}
		}
		command.set(2, Integer.toString(command.size() - 3));
		command.add(operation);
		command.add(Integer.toString(limits.length));
		command.addAll(header);
		if (operation.equals(RedisRateLimitStore.CHECK) || operation.equals(RedisRateLimitStore.ACQUIRE)
				|| operation.equals(RedisRateLimitStore.LEASE) || operation.equals(RedisRateLimitStore.SETTLE)) {
			command.add("0"); // the deadline: none
		}
		for (int i = 0; i < limits.length; i++) {
			Limit limit = limits[i];
			command.add(limit.code());
			command.add(Long.toString(limit.capacity()));
			command.add(Long.toString(limit.refillTokens()));
			command.add((limit.periodText() != null) ? limit.periodText() : Long.toString(limit.periodMicros()));
			command.add(Long.toString(costs[i]));
		}
		return command.toArray(String[]::new);
	}

	/**
	 * One limit as the script takes it.
	 * @param periodText the refill period as sent, when it is not a number of microseconds (a quota's boundaries)
	 */
	record Limit(String code, long capacity, long refillTokens, long periodMicros, @Nullable String periodText) {

		Limit(String code, long capacity, long refillTokens, long periodMicros) {
			this(code, capacity, refillTokens, periodMicros, null);
		}

		/** A calendar quota: {@code limit} tokens per period, the period boundaries around the gateway's time. */
		static Limit quota(long limit, long... boundaries) {
			return new Limit("q", limit, limit, 0, java.util.Arrays.stream(boundaries)
				.mapToObj(Long::toString)
				.collect(java.util.stream.Collectors.joining(",")));
		}

		static Limit tokenBucket(long capacity, long refillTokens, long periodMicros) {
			return new Limit("tb", capacity, refillTokens, periodMicros);
		}

		/** A window limit: capacity tokens per window ({@code swl}, {@code swc} or {@code fw}). */
		static Limit window(String code, long capacity, long windowMicros) {
			return new Limit(code, capacity, capacity, windowMicros);
		}

		/** A concurrency limit: at most {@code maxInFlight} slots, each freed at the latest after {@code maxHoldMicros}. */
		static Limit concurrency(long maxInFlight, long maxHoldMicros) {
			return new Limit("cc", maxInFlight, maxInFlight, maxHoldMicros);
		}

		/** The same kind of limit with other numbers (a token bucket refilling capacity per period). */
		Limit with(long newCapacity, long newPeriodMicros) {
			return new Limit(this.code, newCapacity, newCapacity, newPeriodMicros);
		}

	}

	/** The reply of a check that took a lease: the check's, the tokens leased and the lease's end (microseconds). */
	record Leased(Result check, long tokens, long endMicros) {

		/** This lease, given back with some of it unspent. */
		long[] returned(long unused) {
			return new long[] { this.tokens, unused, this.endMicros };
		}

	}

	/** The script's reply. */
	record Result(long[] values) {

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

		@Override
		public String toString() {
			return Arrays.toString(this.values);
		}

	}

}
