package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.github.ratelimit.gateway.chain.LeaseStore.ReturnedLease;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;

import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.ABANDON;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.ACQUIRE;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.CHECK;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.LEASE;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.QUOTA;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.QUOTA_BOUNDARIES;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.REFUND;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.RELEASE;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.SETTLE;
import static io.github.ratelimit.gateway.redis.RedisRateLimitStore.TOP_UP;

/**
 * The rate limit script's arguments for a set of limits (see the contract at the head of {@code dispatch.lua}),
 * encoded once per {@link PlanLimits} object (a check at cost 1), and again when the gateway's clock leaves the
 * period a quota's boundaries were placed around; other calls copy the array, replace the header and set each
 * limit's cost. Keys are built per client; the part after the client id
 * (":0", ":1:swl", ...) is encoded once.
 */
final class ScriptArguments {

	/** Compiles the arguments of a set of limits, once per {@link PlanLimits} object. */
	static final Function<PlanLimits, ScriptArguments> COMPILER = ScriptArguments::new;

	private static final byte[] CHECK_BYTES = CHECK.getBytes(StandardCharsets.UTF_8);

	private static final byte[] REFUND_BYTES = REFUND.getBytes(StandardCharsets.UTF_8);

	private static final byte[] SETTLE_BYTES = SETTLE.getBytes(StandardCharsets.UTF_8);

	private static final byte[] LEASE_BYTES = LEASE.getBytes(StandardCharsets.UTF_8);

	private static final byte[] ACQUIRE_BYTES = ACQUIRE.getBytes(StandardCharsets.UTF_8);

	private static final byte[] RELEASE_BYTES = RELEASE.getBytes(StandardCharsets.UTF_8);

	private static final byte[] ABANDON_BYTES = ABANDON.getBytes(StandardCharsets.UTF_8);

	private static final byte[] TOP_UP_BYTES = TOP_UP.getBytes(StandardCharsets.UTF_8);

	private static final byte[] QUOTA_BYTES = QUOTA.getBytes(StandardCharsets.UTF_8);

	private static final byte[] ZERO = { '0' };

	private static final byte[] ONE = { '1' };

	/** Values per limit: algorithm code, capacity, refill tokens, refill period, cost. */
	private static final int PER_LIMIT = 5;

	/** {@code check}, n, the deadline: the compiled check's values before the limits. */
	private static final int CHECK_HEADER = 3;

	/** The operation, n: the values before an operation's own. */
	private static final int HEADER = 2;

	/** Index of a check's deadline. */
	private static final int CHECK_DEADLINE = 2;

	final PlanLimits limits;

	/** Whether the limits hold a concurrency limit, so that a check of cost above 0 acquires slots. */
	final boolean takesSlots;

	/** Whether the limits hold a quota, whose boundaries move with the gateway's clock. */
	private final boolean hasQuota;

	/**
	 * A check at cost 1 (see {@link #checkAtCostOne}), and the gateway times it serves: from the latest start to
	 * the earliest end of the quotas' current periods ({@link PlanLimits#quotaPeriodsAt}; every time without
	 * quotas).
	 */
	private volatile Compiled compiled;

	private final byte[][] keySuffixes;

	ScriptArguments(PlanLimits limits) {
		this.limits = limits;
		this.takesSlots = limits.hasConcurrencyLimits();
		this.hasQuota = limits.limits().stream().anyMatch(LimitDefinition::isQuota);
		this.compiled = compile(Instant.now());
		List<String> suffixes = BucketKeys.keySuffixes(limits);
		this.keySuffixes = new byte[suffixes.size()][];
		for (int i = 0; i < this.keySuffixes.length; i++) {
			this.keySuffixes[i] = ("}" + suffixes.get(i)).getBytes(StandardCharsets.UTF_8);
		}
	}

	private Compiled compile(Instant now) {
		List<String> strings = checkAtCostOne(this.limits, now);
		byte[][] check = new byte[strings.size()][];
		for (int i = 0; i < check.length; i++) {
			check[i] = strings.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return new Compiled(check, this.limits.quotaPeriodsAt(now));
	}

	/** The check at cost 1 for the gateway's time now, compiled anew when a quota's period has changed. */
	private byte[][] check() {
		Compiled current = this.compiled;
		if (this.hasQuota) {
			Instant now = Instant.now();
			if (!current.periods.contains(now)) {
				current = compile(now);
				this.compiled = current;
			}
		}
		return current.check;
	}

	/**
	 * {@code check}, n, the deadline, then the limits. At cost 1 the compiled check, copied only to set a deadline
	 * other than 0 (one more value encoded per check).
	 * @param cost what the check takes
	 * @param deadlineMicros the deadline in Redis time (microseconds), 0 for none
	 */
	byte[][] check(Cost cost, long deadlineMicros) {
		if (cost.equals(Cost.ONE)) {
			byte[][] check = check();
			if (deadlineMicros == 0) {
				return check;
			}
			byte[][] args = check.clone();
			args[CHECK_DEADLINE] = encode(deadlineMicros);
			return args;
		}
		return call(header(CHECK_BYTES, encodeDeadline(deadlineMicros)), cost, false);
	}

	/** {@code acquire}, n, the slot's id, the deadline, then the limits, a slot taken in each concurrency limit. */
	byte[][] acquire(Cost cost, byte[] slot, long deadlineMicros) {
		return call(header(ACQUIRE_BYTES, slot, encodeDeadline(deadlineMicros)), cost, true);
	}

	/** {@code release}, n, the slot's id, then the limits, no tokens refunded. */
	byte[][] release(byte[] slot) {
		return call(header(RELEASE_BYTES, slot), Cost.NONE, false);
	}

	/** {@code abandon}, n, the slot's id, then the limits, no tokens refunded. */
	byte[][] abandon(byte[] slot) {
		return call(header(ABANDON_BYTES, slot), Cost.NONE, false);
	}

	/** {@code lease}, n, wanted, duration, the previous lease's three numbers, the deadline, then the limits. */
	byte[][] lease(long cost, long wanted, long durationMicros, ReturnedLease previous, long deadlineMicros) {
		return call(header(LEASE_BYTES, encode(wanted), encode(durationMicros), encode(previous.granted()),
				encode(previous.unused()), encode(previous.endMicros()), encodeDeadline(deadlineMicros)),
				Cost.tokens(cost), false);
	}

	/** {@code refund}, n, then the limits, each with the tokens to give back. */
	byte[][] refund(Cost cost) {
		return call(header(REFUND_BYTES), cost, false);
	}

	/** {@code quota}, n, then the limits, each at cost 0. */
	byte[][] quota() {
		return call(header(QUOTA_BYTES), Cost.NONE, false);
	}

	/** {@code topup}, n, then the limits: {@code tokens} for the one at {@code index}, 0 for the others. */
	byte[][] topUp(int index, long tokens) {
		byte[][] args = call(header(TOP_UP_BYTES), Cost.NONE, false);
		args[HEADER + PER_LIMIT * index + PER_LIMIT - 1] = encode(tokens);
		return args;
	}

	/**
	 * {@code settle}, n, the deadline, then the limits, each with the tokens to charge (or, negative, give back).
	 * @param difference what each limit is charged (or, negative, given back)
	 * @param deadlineMicros the deadline in Redis time (microseconds), 0 for none
	 */
	byte[][] settle(Cost difference, long deadlineMicros) {
		return call(header(SETTLE_BYTES, encodeDeadline(deadlineMicros)), difference, false);
	}

	/** The operation, n, then the operation's own values. */
	private byte[][] header(byte[] operation, byte[]... values) {
		byte[][] header = new byte[HEADER + values.length][];
		header[0] = operation;
		header[1] = this.compiled.check[1];
		System.arraycopy(values, 0, header, HEADER, values.length);
		return header;
	}

	/** A call: its header, then each limit's four values from the check and its cost. */
	private byte[][] call(byte[][] header, Cost cost, boolean slots) {
		List<LimitDefinition> list = this.limits.limits();
		byte[][] args = new byte[header.length + PER_LIMIT * list.size()][];
		System.arraycopy(header, 0, args, 0, header.length);
		byte[][] check = check();
		System.arraycopy(check, CHECK_HEADER, args, header.length, check.length - CHECK_HEADER);
		byte[] tokens = encodeCost(cost.tokens());
		byte[] usage = encodeCost(cost.usage());
		for (int i = 0; i < list.size(); i++) {
			LimitDefinition limit = list.get(i);
			int at = header.length + PER_LIMIT * i + PER_LIMIT - 1;
			if (limit.isConcurrency()) {
				args[at] = (slots && cost.tokens() > 0) ? ONE : ZERO;
			}
			else {
				args[at] = limit.isUsage() ? usage : tokens;
			}
		}
		return args;
	}

	private static byte[] encodeDeadline(long micros) {
		return (micros == 0) ? ZERO : encode(micros);
	}

	private static byte[] encodeCost(long value) {
		return (value == 0) ? ZERO : (value == 1) ? ONE : encode(value);
	}

	private static byte[] encode(long value) {
		return Long.toString(value).getBytes(StandardCharsets.UTF_8);
	}

	/** A check's arguments and the gateway times they serve (the quotas' current periods). */
	private record Compiled(byte[][] check, QuotaPeriod.Interval periods) {
	}

	byte[][] keys(BucketKeys keys, ClientKey client) {
		byte[] base = keys.hashTagStart(client, this.limits);
		byte[][] result = new byte[this.keySuffixes.length][];
		for (int i = 0; i < result.length; i++) {
			byte[] suffix = this.keySuffixes[i];
			byte[] key = new byte[base.length + suffix.length];
			System.arraycopy(base, 0, key, 0, base.length);
			System.arraycopy(suffix, 0, key, base.length, suffix.length);
			result[i] = key;
		}
		return result;
	}

	/**
	 * The script's {@code ARGV} for a check of some limits at cost 1, as of the gateway's time {@code now}: see
	 * {@link RedisRateLimitStore#scriptArguments(PlanLimits, Instant)}.
	 */
	static List<String> checkAtCostOne(PlanLimits limits, Instant now) {
		List<LimitDefinition> list = limits.limits();
		List<String> args = new ArrayList<>(CHECK_HEADER + PER_LIMIT * list.size());
		args.add(CHECK);
		args.add(Integer.toString(list.size()));
		args.add("0"); // no deadline
		for (LimitDefinition limit : list) {
			args.add(limit.algorithm().scriptCode());
			args.add(Long.toString(limit.capacity()));
			args.add(Long.toString(limit.refillTokens()));
			QuotaPeriod period = limit.quotaPeriod();
			args.add((period == null) ? Long.toString(limit.refillPeriodMicros()) : quotaBoundaries(period, now));
			args.add((limit.isConcurrency() || limit.isUsage()) ? "0" : "1");
		}
		return List.copyOf(args);
	}

	/** The four boundaries around {@code now}, in microseconds since the epoch, comma-separated. */
	private static String quotaBoundaries(QuotaPeriod period, Instant now) {
		StringBuilder boundaries = new StringBuilder(64);
		for (Instant boundary : period.boundariesAround(now, QUOTA_BOUNDARIES)) {
			if (boundaries.length() > 0) {
				boundaries.append(',');
			}
			boundaries.append(Math.multiplyExact(boundary.toEpochMilli(), 1000L));
		}
		return boundaries.toString();
	}

}
