package io.github.ratelimit.gateway.limits;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One limit as enforced. With the {@link Algorithm#TOKEN_BUCKET token bucket} (the default): a bucket of
 * {@code capacity} tokens gaining {@code refillTokens} tokens per {@code refillPeriod}, continuously. With a
 * {@link Algorithm#isWindow() window algorithm}: at most {@code capacity} tokens per window of one
 * {@code refillPeriod}, and {@code refillTokens == capacity} (a window's worth of tokens per window). A
 * {@link Algorithm#CONCURRENCY concurrency limit} (see {@link #concurrency}): at most {@code capacity} requests in
 * flight, a slot not given back freeing itself after {@code refillPeriod} (the longest request duration), and
 * {@code refillTokens == capacity}. A {@link Algorithm#QUOTA quota} (see {@link #quota}): at most {@code capacity}
 * tokens per {@link #quotaPeriod() period} of the calendar, reset at its end; {@code refillTokens == capacity} and
 * {@code refillPeriod} is the period's {@linkplain QuotaPeriod#longest() longest length}.
 *
 * @param policyName name of the quota policy shown to clients in the {@code RateLimit-Policy} and
 * {@code RateLimit} fields, e.g. {@code free-search}
 * @param capacity most tokens the bucket holds, or tokens per window (1 to 2^53), or requests in flight
 * @param refillTokens tokens added per refill period (1 to 2^53); equal to {@code capacity} for window algorithms and
 * concurrency limits
 * @param refillPeriod the refill period, or the window, or the longest request duration (at least 1 ms)
 * @param algorithm how the limit is enforced
 * @param scope who shares the limit's state: each client ({@link LimitScope#CLIENT}) or every client of the endpoint
 * group ({@link LimitScope#GLOBAL})
 * @param leaseBudget token leases ({@link LeaseBudget#OFF}: none, the default): the most tokens one gateway instance
 * may take ahead from the shared bucket in one lease, in percent of {@code capacity} (at most
 * {@value #MAX_LEASE_BUDGET_PERCENT}); token buckets only
 * @param unit what a token stands for: {@value #REQUESTS} (the default: a request takes its route's {@code cost}),
 * or a unit of usage ({@code tokens}, {@code bytes}, ...: a request reserves its route's estimate and is charged what
 * its answer used, see {@link #isUsage()}); lower-case letters, digits and {@code -}, starting with a letter, at most
 * {@value #MAX_UNIT_LENGTH} characters
 * @param quotaPeriod the period a {@link Algorithm#QUOTA quota} counts in; {@code null} for every other algorithm
 */
public record LimitDefinition(String policyName, long capacity, long refillTokens, Duration refillPeriod,
		Algorithm algorithm, LimitScope scope, LeaseBudget leaseBudget, String unit, @Nullable QuotaPeriod quotaPeriod) {

	/** The unit of a limit that counts requests: each takes its route's {@code cost} (1 by default). */
	public static final String REQUESTS = "requests";

	/** Longest unit name. */
	public static final int MAX_UNIT_LENGTH = 32;

	/** Largest capacity or refill count: 2^53, the largest integer a Lua number (a double) holds exactly. */
	public static final long MAX_TOKENS = 1L << 53;

	/**
	 * Largest capacity of a {@link Algorithm#SLIDING_WINDOW_LOG sliding window log}: it keeps one Redis entry per
	 * admitted token for a whole window, so a client's log can hold this many entries (tens of MB).
	 */
	public static final long MAX_LOG_CAPACITY = 1_000_000;

	/**
	 * Longest time a token bucket may take to fill from empty ({@code capacity * refillPeriod / refillTokens}): 100
	 * years, so that the bucket's state, one time in microseconds, stays an exact integer (see the script).
	 */
	public static final Duration MAX_FILL_TIME = Duration.ofDays(36_500);

	/** Largest lease budget, in percent of the capacity (a lease never takes more than half of a bucket anyway). */
	public static final double MAX_LEASE_BUDGET_PERCENT = 50;

	/**
	 * Validate the combination.
	 * @throws IllegalArgumentException if a window algorithm's or a concurrency limit's {@code refillTokens} differs
	 * from its capacity, the lease budget is out of range or set on another limit than a token bucket counting
	 * requests, the unit is not a unit name, a usage unit is set on a sliding window log or a concurrency limit, or
	 * a quota period is missing on a quota, set on another algorithm, or differs from the refill period's longest length
	 */
	public LimitDefinition {
		Objects.requireNonNull(algorithm, "algorithm");
		Objects.requireNonNull(scope, "scope");
		Objects.requireNonNull(leaseBudget, "leaseBudget");
		Objects.requireNonNull(unit, "unit");
		if (!isUnitName(unit)) {
			throw new IllegalArgumentException("limit '" + policyName + "': a unit is lower-case letters, digits and '-', "
					+ "starting with a letter, at most " + MAX_UNIT_LENGTH + " characters, was '" + unit + "'");
		}
		if (!REQUESTS.equals(unit) && (algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.CONCURRENCY)) {
			throw new IllegalArgumentException("limit '" + policyName + "': a " + algorithm.configName()
					+ " limit counts requests, not '" + unit + "'" + (algorithm.isConcurrency() ? ""
							: " (it keeps one entry per token: use token-bucket, fixed-window or sliding-window-counter)"));
		}
		if (!REQUESTS.equals(unit) && !leaseBudget.isOff()) {
			throw new IllegalArgumentException("limit '" + policyName + "': a limit in '" + unit
					+ "' takes no lease: what a request uses is known after its answer, a lease spends it before");
		}
		if ((algorithm == Algorithm.QUOTA) != (quotaPeriod != null)
				|| (quotaPeriod != null && !quotaPeriod.longest().equals(refillPeriod))) {
			throw new IllegalArgumentException("limit '" + policyName + "': a quota, and only a quota, has a quota period "
					+ "whose longest length is its refill period, was " + algorithm.configName() + " with " + quotaPeriod
					+ " and " + refillPeriod);
		}
		if (algorithm != Algorithm.TOKEN_BUCKET && refillTokens != capacity) {
			throw new IllegalArgumentException(algorithm.configName() + " limit '" + policyName + "' takes "
					+ (algorithm.isConcurrency() ? "one slot per request" : "capacity tokens per window or period")
					+ ": refillTokens must equal capacity " + capacity + ", was " + refillTokens);
		}
		if (leaseBudget.percent() > MAX_LEASE_BUDGET_PERCENT
				|| (!leaseBudget.isOff() && algorithm != Algorithm.TOKEN_BUCKET)) {
			throw new IllegalArgumentException("limit '" + policyName + "': a lease budget is a percentage above 0 and at "
					+ "most " + MAX_LEASE_BUDGET_PERCENT + " of a token bucket's capacity, was " + leaseBudget
					+ " for " + algorithm.configName());
		}
	}

	/**
	 * A limit other than a quota.
	 * @param policyName name of the quota policy shown to clients
	 * @param capacity most tokens the bucket holds, or tokens per window (1 to 2^53), or requests in flight
	 * @param refillTokens tokens added per refill period (1 to 2^53); equal to {@code capacity} for window algorithms
	 * and concurrency limits
	 * @param refillPeriod the refill period, or the window, or the longest request duration (at least 1 ms)
	 * @param algorithm how the limit is enforced, not {@link Algorithm#QUOTA}
	 * @param scope who shares the limit's state
	 * @param leaseBudget token leases ({@link LeaseBudget#OFF}: none)
	 * @param unit {@value #REQUESTS} or a unit of usage
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public LimitDefinition(String policyName, long capacity, long refillTokens, Duration refillPeriod,
			Algorithm algorithm, LimitScope scope, LeaseBudget leaseBudget, String unit) {
		this(policyName, capacity, refillTokens, refillPeriod, algorithm, scope, leaseBudget, unit, null);
	}

	/**
	 * A limit counting requests.
	 * @param policyName name of the quota policy shown to clients
	 * @param capacity most tokens the bucket holds, or tokens per window (1 to 2^53), or requests in flight
	 * @param refillTokens tokens added per refill period (1 to 2^53); equal to {@code capacity} for window algorithms
	 * and concurrency limits
	 * @param refillPeriod the refill period, or the window, or the longest request duration (at least 1 ms)
	 * @param algorithm how the limit is enforced
	 * @param scope who shares the limit's state
	 * @param leaseBudget token leases ({@link LeaseBudget#OFF}: none)
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public LimitDefinition(String policyName, long capacity, long refillTokens, Duration refillPeriod,
			Algorithm algorithm, LimitScope scope, LeaseBudget leaseBudget) {
		this(policyName, capacity, refillTokens, refillPeriod, algorithm, scope, leaseBudget, REQUESTS);
	}

	/**
	 * A limit without token leases.
	 * @param policyName name of the quota policy shown to clients
	 * @param capacity most tokens the bucket holds, or tokens per window (1 to 2^53)
	 * @param refillTokens tokens added per refill period (1 to 2^53); equal to {@code capacity} for window algorithms
	 * @param refillPeriod the refill period, or the window (at least 1 ms)
	 * @param algorithm how the limit is enforced
	 * @param scope who shares the limit's state
	 * @throws IllegalArgumentException if a window algorithm's {@code refillTokens} differs from its capacity
	 */
	public LimitDefinition(String policyName, long capacity, long refillTokens, Duration refillPeriod,
			Algorithm algorithm, LimitScope scope) {
		this(policyName, capacity, refillTokens, refillPeriod, algorithm, scope, LeaseBudget.OFF);
	}

	/**
	 * A limit of one client (scope {@link LimitScope#CLIENT}).
	 * @param policyName name of the quota policy shown to clients
	 * @param capacity most tokens the bucket holds, or tokens per window (1 to 2^53)
	 * @param refillTokens tokens added per refill period (1 to 2^53); equal to {@code capacity} for window algorithms
	 * @param refillPeriod the refill period, or the window (at least 1 ms)
	 * @param algorithm how the limit is enforced
	 * @throws IllegalArgumentException if a window algorithm's {@code refillTokens} differs from its capacity
	 */
	public LimitDefinition(String policyName, long capacity, long refillTokens, Duration refillPeriod,
			Algorithm algorithm) {
		this(policyName, capacity, refillTokens, refillPeriod, algorithm, LimitScope.CLIENT);
	}

	/**
	 * A token bucket limit of one client.
	 * @param policyName name of the quota policy shown to clients
	 * @param capacity most tokens the bucket holds (1 to 2^53)
	 * @param refillTokens tokens added per refill period (1 to 2^53)
	 * @param refillPeriod the refill period (at least 1 ms)
	 */
	public LimitDefinition(String policyName, long capacity, long refillTokens, Duration refillPeriod) {
		this(policyName, capacity, refillTokens, refillPeriod, Algorithm.TOKEN_BUCKET, LimitScope.CLIENT);
	}

	/**
	 * A window limit of one client: at most {@code capacity} tokens per {@code window}.
	 * @param policyName name of the quota policy shown to clients
	 * @param algorithm a window algorithm
	 * @param capacity tokens per window (1 to 2^53)
	 * @param window the window (at least 1 ms)
	 * @return the limit
	 */
	public static LimitDefinition window(String policyName, Algorithm algorithm, long capacity, Duration window) {
		return new LimitDefinition(policyName, capacity, capacity, window, algorithm);
	}

	/**
	 * A concurrency limit of one client: at most {@code maxInFlight} requests in flight at once.
	 * @param policyName name of the quota policy shown to clients
	 * @param maxInFlight requests in flight at most (1 to 2^53)
	 * @param maxRequestDuration the longest a request may hold its slot: a slot not given back (its instance died)
	 * is free again this long after it was taken (at least 1 ms)
	 * @return the limit
	 */
	public static LimitDefinition concurrency(String policyName, long maxInFlight, Duration maxRequestDuration) {
		return new LimitDefinition(policyName, maxInFlight, maxInFlight, maxRequestDuration, Algorithm.CONCURRENCY);
	}

	/**
	 * A quota of one client, counting requests: at most {@code limit} tokens per period of the calendar.
	 * @param policyName name of the quota policy shown to clients
	 * @param limit tokens per period (1 to 2^53)
	 * @param period the period, e.g. a month in {@code Europe/Berlin}
	 * @return the limit
	 */
	public static LimitDefinition quota(String policyName, long limit, QuotaPeriod period) {
		return new LimitDefinition(policyName, limit, limit, period.longest(), Algorithm.QUOTA, LimitScope.CLIENT,
				LeaseBudget.OFF, REQUESTS, period);
	}

	/**
	 * Whether this is a {@link Algorithm#QUOTA quota}, counting per period of the calendar.
	 * @return {@code true} when {@link #quotaPeriod()} is set
	 */
	public boolean isQuota() {
		return this.quotaPeriod != null;
	}

	/**
	 * Whether this limits requests in flight ({@link Algorithm#CONCURRENCY}) rather than a rate.
	 * @return {@code true} for a concurrency limit
	 */
	public boolean isConcurrency() {
		return this.algorithm == Algorithm.CONCURRENCY;
	}

	/**
	 * The same limit under another policy name.
	 * @param name the new policy name
	 * @return the renamed limit
	 */
	public LimitDefinition withPolicyName(String name) {
		return new LimitDefinition(name, this.capacity, this.refillTokens, this.refillPeriod, this.algorithm, this.scope,
				this.leaseBudget, this.unit, this.quotaPeriod);
	}

	/**
	 * The same limit with another scope.
	 * @param newScope who shares the limit's state
	 * @return the limit with that scope
	 */
	public LimitDefinition withScope(LimitScope newScope) {
		return new LimitDefinition(this.policyName, this.capacity, this.refillTokens, this.refillPeriod, this.algorithm,
				newScope, this.leaseBudget, this.unit, this.quotaPeriod);
	}

	/**
	 * The same limit with token leases.
	 * @param budget the lease budget ({@link LeaseBudget#OFF}: no leases)
	 * @return the limit with that lease budget
	 * @throws IllegalArgumentException if the budget is above {@value #MAX_LEASE_BUDGET_PERCENT} percent, or this is
	 * not a token bucket
	 */
	public LimitDefinition withLeaseBudget(LeaseBudget budget) {
		return new LimitDefinition(this.policyName, this.capacity, this.refillTokens, this.refillPeriod, this.algorithm,
				this.scope, budget, this.unit, this.quotaPeriod);
	}

	/**
	 * The same limit counting another unit.
	 * @param newUnit {@value #REQUESTS} or a unit of usage
	 * @return the limit in that unit
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public LimitDefinition withUnit(String newUnit) {
		return new LimitDefinition(this.policyName, this.capacity, this.refillTokens, this.refillPeriod, this.algorithm,
				this.scope, this.leaseBudget, newUnit, this.quotaPeriod);
	}

	/**
	 * Whether this limit counts a unit of usage rather than requests: an admitted request reserves its route's
	 * estimate in it, and is charged what its answer used once the answer is over (settled: unused units go back,
	 * excess is charged, a token bucket may owe up to one capacity).
	 * @return {@code true} unless the unit is {@value #REQUESTS}
	 */
	public boolean isUsage() {
		return !REQUESTS.equals(this.unit);
	}

	/**
	 * A short label for a period, as default policy names carry it: {@code 1s}, {@code 15m}, {@code 1h}, {@code 1d},
	 * the largest of these units that divides it, else milliseconds ({@code 250ms}).
	 * @param period the period (whole milliseconds)
	 * @return the label
	 */
	public static String periodLabel(Duration period) {
		long ms = period.toMillis();
		if (ms % 86_400_000L == 0) {
			return (ms / 86_400_000L) + "d";
		}
		if (ms % 3_600_000L == 0) {
			return (ms / 3_600_000L) + "h";
		}
		if (ms % 60_000L == 0) {
			return (ms / 60_000L) + "m";
		}
		if (ms % 1000L == 0) {
			return (ms / 1000L) + "s";
		}
		return ms + "ms";
	}

	/**
	 * Whether a string is a unit name: lower-case letters, digits and {@code -}, starting with a letter, at most
	 * {@value #MAX_UNIT_LENGTH} characters.
	 * @param unit the string
	 * @return whether it names a unit
	 */
	public static boolean isUnitName(String unit) {
		if (unit.isEmpty() || unit.length() > MAX_UNIT_LENGTH || unit.charAt(0) < 'a' || unit.charAt(0) > 'z') {
			return false;
		}
		for (int i = 1; i < unit.length(); i++) {
			char c = unit.charAt(i);
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The most tokens one lease of this limit may hold: {@code floor(capacity * leaseBudget.percent() / 100)}.
	 * @return tokens, 0 when the limit takes no leases
	 */
	public long leaseTokens() {
		return (long) Math.floor(this.capacity * this.leaseBudget.percent() / 100);
	}

	/**
	 * Whether every client of the endpoint group shares this limit.
	 * @return {@code true} for {@link LimitScope#GLOBAL}
	 */
	public boolean isGlobal() {
		return this.scope == LimitScope.GLOBAL;
	}

	/**
	 * The refill period in microseconds, the time unit of the Lua script.
	 * @return the period in microseconds (at least 1000)
	 */
	public long refillPeriodMicros() {
		return this.refillPeriod.toNanos() / 1000;
	}

	/**
	 * The window of this limit for the {@code w} parameter of {@code RateLimit-Policy}: the time an empty bucket
	 * takes to fill, {@code capacity / (refillTokens / refillPeriod)}, in whole seconds rounded up; for window
	 * algorithms that is the window itself, for a concurrency limit the longest request duration, for a quota the
	 * length of the period containing {@code now}.
	 * @param now the gateway's time (only a quota reads it)
	 * @return the window in seconds, at least 1
	 */
	public long windowSeconds(Instant now) {
		QuotaPeriod period = this.quotaPeriod;
		if (period != null) {
			return period.seconds(now);
		}
		double seconds = (double) this.capacity * this.refillPeriod.toNanos() / 1e9 / this.refillTokens;
		return Math.max(1, (long) Math.ceil(seconds));
	}

}
