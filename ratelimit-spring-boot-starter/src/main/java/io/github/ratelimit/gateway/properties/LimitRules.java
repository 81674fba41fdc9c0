package io.github.ratelimit.gateway.properties;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * The rules of one list of limits ({@code ratelimit.plans.<plan>.default} or {@code .groups.<group>}): each limit's
 * values in range for its type (rate, concurrency or quota) and algorithm, and no setting of another type.
 */
final class LimitRules {

	/** Longest refill period accepted (3650 days). */
	static final Duration MAX_PERIOD = Duration.ofDays(3650);

	/** Largest max-request-duration of a concurrency limit. */
	static final Duration MAX_REQUEST_DURATION = Duration.ofDays(7);

	/** Largest max-in-flight of a concurrency limit: Redis keeps one sorted-set entry per request in flight. */
	static final long MAX_IN_FLIGHT = 1_000_000;

	/** Keys of a quota's own ({@code type: quota}). */
	private static final Set<String> QUOTA_KEYS = Set.of("limit", "period");

	/** Keys of a concurrency limit's own ({@code type: concurrency}). */
	private static final Set<String> CONCURRENCY_KEYS = Set.of("max-in-flight", "max-request-duration");

	/** Keys of a rate limit's own ({@code type: rate}, the default). */
	private static final Set<String> RATE_KEYS = Set.of("capacity", "refill-tokens", "refill-period", "algorithm",
			"lease");

	private LimitRules() {
	}

	/**
	 * Check a list of limits.
	 * @param property the list's property, e.g. {@code ratelimit.plans.free.default}
	 * @param limits the limits, not empty
	 * @param v where the problems found are added, each naming {@code <property>[<index>].<field>}
	 */
	static void check(String property, List<RateLimitProperties.Limit> limits,
			List<ConfigurationViolation> v) {
		String usageUnit = null;
		for (int i = 0; i < limits.size(); i++) {
			String unit = limits.get(i).getUnit();
			if (unit == null || LimitDefinition.REQUESTS.equals(unit)) {
				continue;
			}
			if (usageUnit != null && !usageUnit.equals(unit)) {
				v.add(new ConfigurationViolation(property + "[" + i + "].unit",
						"is '" + unit + "', but another limit of this list counts '" + usageUnit
								+ "': a route measures one unit of usage.",
						"count one unit per endpoint group (give the other unit's route a group of its own)."));
			}
			usageUnit = unit;
		}
		for (int i = 0; i < limits.size(); i++) {
			String at = property + "[" + i + "]";
			RateLimitProperties.Limit limit = limits.get(i);
			if (limit.getType() == null) {
				v.add(new ConfigurationViolation(at + ".type", "must be set.",
						"use rate (the default: tokens per time) or concurrency (requests in flight at once)."));
			}
			else if (limit.isQuota()) {
				validateQuota(at, limit, v);
				continue;
			}
			if (limit.getLimit() != 0 || limit.getPeriod() != null) {
				v.add(quotaOnly(at, (limit.getLimit() != 0) ? "limit" : "period", limit.getType()));
			}
			if (limit.isConcurrency()) {
				if (!LimitDefinition.REQUESTS.equals(limit.getUnit())) {
					v.add(new ConfigurationViolation(at + ".unit",
							"is '" + limit.getUnit() + "', but a concurrency limit counts requests in flight.",
							"remove unit, or count the usage in a rate limit (type: rate) of its own."));
				}
				validateConcurrencyLimit(at, limit, v);
				continue;
			}
			if (limit.getMaxInFlight() != 0 || limit.getMaxRequestDuration() != null) {
				v.add(concurrencyOnly(at, (limit.getMaxInFlight() != 0) ? "max-in-flight" : "max-request-duration"));
			}
			Algorithm algorithm = limit.getAlgorithm();
			if (algorithm == Algorithm.CONCURRENCY) {
				v.add(new ConfigurationViolation(at + ".algorithm", "is concurrency, which is a type, not an algorithm.",
						"write type: concurrency with max-in-flight and max-request-duration instead."));
				continue;
			}
			if (algorithm == null) {
				v.add(new ConfigurationViolation(at + ".algorithm", "must be set.",
						"use token-bucket (the default), sliding-window-log, sliding-window-counter or fixed-window."));
				algorithm = Algorithm.TOKEN_BUCKET;
			}
			if (limit.getScope() == null) {
				v.add(new ConfigurationViolation(at + ".scope", "must be set.",
						"use client (the default: one bucket per client) or global (one bucket shared by every "
								+ "client of the endpoint group)."));
			}
			if (limit.getCapacity() < 1 || limit.getCapacity() > LimitDefinition.MAX_TOKENS) {
				v.add(new ConfigurationViolation(at + ".capacity",
						"must be between 1 and 2^53 tokens, was " + limit.getCapacity() + ".",
						algorithm.isWindow()
								? "set how many tokens (requests) a client may spend per refill-period window, at least 1."
								: "set the largest burst the client may send, at least 1 (0 would refuse every request)."));
			}
			else if (algorithm == Algorithm.SLIDING_WINDOW_LOG && limit.getCapacity() > LimitDefinition.MAX_LOG_CAPACITY) {
				v.add(new ConfigurationViolation(at + ".capacity",
						"must be at most 1,000,000 tokens with sliding-window-log (it keeps one Redis entry per "
								+ "admitted token for a whole window), was " + limit.getCapacity() + ".",
						"use algorithm: sliding-window-counter (two counters per client, approximate) or token-bucket "
								+ "for limits this large."));
			}
			if (algorithm.isWindow()) {
				// a window admits capacity tokens per window: refill-tokens is implied (0 = left out) or must agree
				if (limit.getRefillTokens() != 0 && limit.getRefillTokens() != limit.getCapacity()) {
					v.add(new ConfigurationViolation(at + ".refill-tokens",
							"must equal capacity (" + limit.getCapacity() + ") or be left out with algorithm "
									+ algorithm.configName() + ", which admits capacity tokens per refill-period "
									+ "window; was " + limit.getRefillTokens() + ".",
							"remove refill-tokens (or set it to " + limit.getCapacity() + "); for a burst larger "
									+ "than the rate, use algorithm: token-bucket."));
				}
			}
			else if (limit.getRefillTokens() < 1 || limit.getRefillTokens() > LimitDefinition.MAX_TOKENS) {
				v.add(new ConfigurationViolation(at + ".refill-tokens",
						"must be between 1 and 2^53 tokens, was " + limit.getRefillTokens() + ".",
						"set how many tokens the bucket regains per refill-period, at least 1 "
								+ "(for slower rates lengthen refill-period, e.g. 1 per 1m)."));
			}
			LeaseBudget lease = Objects.requireNonNullElse(limit.getLease(), LeaseBudget.OFF);
			String unit = limit.getUnit();
			boolean usage = checkUnitName(at, unit, v) && !LimitDefinition.REQUESTS.equals(unit);
			if (usage && algorithm == Algorithm.SLIDING_WINDOW_LOG) {
				v.add(new ConfigurationViolation(at + ".unit",
						"is '" + unit + "', but sliding-window-log keeps one Redis entry per token, too many for "
								+ "usage.",
						"use algorithm: token-bucket (or fixed-window, sliding-window-counter) for a limit in "
								+ unit + "."));
			}
			else if (usage && !lease.isOff()) {
				v.add(leaseOnUsage(at, unit));
			}
			if (lease.percent() > LimitDefinition.MAX_LEASE_BUDGET_PERCENT) {
				v.add(new ConfigurationViolation(at + ".lease",
						"must be off or a percentage above 0% and at most 50% of the capacity, was '" + lease + "'.",
						"set e.g. lease: 2% (a lease holds at most 2% of the capacity), or leave it out."));
			}
			else if (!lease.isOff() && algorithm != Algorithm.TOKEN_BUCKET) {
				v.add(leaseOnWindow(at, lease, algorithm));
			}
			Duration period = limit.getRefillPeriod();
			if (period == null) {
				v.add(new ConfigurationViolation(at + ".refill-period", "is missing.",
						"set a duration such as 1s, 1m, 15m or 1d."));
			}
			else if (period.toMillis() < 1 || period.compareTo(MAX_PERIOD) > 0) {
				v.add(new ConfigurationViolation(at + ".refill-period",
						"must be between 1ms and 3650d, was " + period + ".",
						"set a positive duration such as 1s, 1m, 15m or 1d."));
			}
			else if (algorithm == Algorithm.TOKEN_BUCKET && limit.getCapacity() >= 1 && limit.getRefillTokens() >= 1) {
				validateTokenBucketTime(at, limit, period, v);
			}
		}
	}

	/**
	 * Check the keys written on one limit against its type: a key of another type of limit is refused even when its
	 * value is the default ({@code capacity: 0} on a quota, {@code algorithm: token-bucket} on a concurrency limit),
	 * as is a lease on a window algorithm or on a limit of usage. {@link #check} refuses values of another type
	 * wherever they come from; this refuses the keys, which only the configuration's names show.
	 * @param at the limit's property, e.g. {@code ratelimit.plans.free.default[0]}
	 * @param limit the limit as bound
	 * @param keys the keys written on it in dashed form, e.g. {@code refill-tokens}
	 * @param v where the problems found are added, each naming {@code <at>.<key>}
	 */
	static void checkKeys(String at, RateLimitProperties.Limit limit, Set<String> keys, List<ConfigurationViolation> v) {
		RateLimitProperties.Limit.Type type = limit.getType();
		if (type == null) {
			return;
		}
		for (String key : keys) {
			if (QUOTA_KEYS.contains(key) && type != RateLimitProperties.Limit.Type.QUOTA) {
				v.add(quotaOnly(at, key, type));
			}
			else if (type == RateLimitProperties.Limit.Type.QUOTA
					&& (CONCURRENCY_KEYS.contains(key) || RATE_KEYS.contains(key))) {
				v.add(notInQuota(at, key));
			}
			else if (CONCURRENCY_KEYS.contains(key) && type == RateLimitProperties.Limit.Type.RATE) {
				v.add(concurrencyOnly(at, key));
			}
			else if (RATE_KEYS.contains(key) && type == RateLimitProperties.Limit.Type.CONCURRENCY) {
				v.add(rateOnly(at, key));
			}
			else if ("lease".equals(key) && type == RateLimitProperties.Limit.Type.RATE) {
				LeaseBudget lease = Objects.requireNonNullElse(limit.getLease(), LeaseBudget.OFF);
				Algorithm algorithm = limit.getAlgorithm();
				if (algorithm != null && algorithm.isWindow()) {
					v.add(leaseOnWindow(at, lease, algorithm));
				}
				else if (limit.getUnit() != null && !LimitDefinition.REQUESTS.equals(limit.getUnit())) {
					v.add(leaseOnUsage(at, limit.getUnit()));
				}
			}
		}
	}

	private static ConfigurationViolation quotaOnly(String at, String key, RateLimitProperties.Limit.Type type) {
		return new ConfigurationViolation(at + "." + key,
				"applies to quotas only, and this limit has type " + type.name().toLowerCase(Locale.ROOT) + ".",
				"add type: quota to count per day, week, month or year (and leave the other type's settings out), "
						+ "or remove it.");
	}

	private static ConfigurationViolation concurrencyOnly(String at, String key) {
		return new ConfigurationViolation(at + "." + key,
				"applies to concurrency limits only, and this limit has type rate.",
				"add type: concurrency to limit requests in flight (and leave capacity, refill-tokens and "
						+ "refill-period out), or remove it.");
	}

	private static ConfigurationViolation rateOnly(String at, String key) {
		return new ConfigurationViolation(at + "." + key,
				"applies to rate limits only, and this limit has type concurrency.",
				"remove " + key + " (a concurrency limit is max-in-flight and max-request-duration), or put the rate "
						+ "in a limit of its own in the same list.");
	}

	private static ConfigurationViolation notInQuota(String at, String key) {
		return new ConfigurationViolation(at + "." + key, "does not apply to a quota (type: quota).",
				"remove " + key + " (a quota is limit and period), or put the rate in a limit of its own in the same "
						+ "list.");
	}

	private static ConfigurationViolation leaseOnWindow(String at, LeaseBudget lease, Algorithm algorithm) {
		return new ConfigurationViolation(at + ".lease",
				"applies to token buckets only, was '" + lease + "' with " + algorithm.configName() + ".",
				"remove lease, or use algorithm: token-bucket.");
	}

	private static ConfigurationViolation leaseOnUsage(String at, String unit) {
		return new ConfigurationViolation(at + ".lease",
				"cannot be used on a limit in '" + unit + "': what a request uses is known after its answer, and a "
						+ "lease spends tokens before the store sees them.",
				"remove lease from this limit.");
	}

	/**
	 * A quota: limit tokens per period of the calendar; the rate and concurrency settings do not apply. Its zone is
	 * checked with the plan ({@link #quotaZone}).
	 */
	private static void validateQuota(String at, RateLimitProperties.Limit limit, List<ConfigurationViolation> v) {
		if (limit.getScope() == null) {
			v.add(new ConfigurationViolation(at + ".scope", "must be set.",
					"use client (the default: one quota per client) or global (one quota shared by every client of "
							+ "the endpoint group)."));
		}
		if (limit.getLimit() < 1 || limit.getLimit() > LimitDefinition.MAX_TOKENS) {
			v.add(new ConfigurationViolation(at + ".limit", "must be between 1 and 2^53 tokens, was " + limit.getLimit()
					+ ".", "set how many requests a client may send per period, e.g. limit: 100000 with period: month."));
		}
		if (limit.getPeriod() == null || limit.getPeriod().isBlank()) {
			v.add(new ConfigurationViolation(at + ".period", "is missing.",
					"set day, week, month or year (or a fixed duration such as 12h)."));
		}
		else {
			try {
				quotaPeriod(limit.getPeriod(), java.time.ZoneOffset.UTC, DayOfWeek.MONDAY);
			}
			catch (IllegalArgumentException ex) {
				v.add(new ConfigurationViolation(at + ".period", ex.getMessage() + ".",
						"set day, week, month or year (or a fixed duration from 1s to 36500d, such as 12h)."));
			}
		}
		checkUnitName(at, limit.getUnit(), v);
		String[] otherTypes = { (limit.getCapacity() != 0) ? "capacity" : null,
				(limit.getRefillTokens() != 0) ? "refill-tokens" : null,
				(limit.getRefillPeriod() != null) ? "refill-period" : null,
				(limit.getLease() != null) ? "lease" : null,
				(limit.getAlgorithm() != null && limit.getAlgorithm() != Algorithm.TOKEN_BUCKET) ? "algorithm" : null,
				(limit.getMaxInFlight() != 0) ? "max-in-flight" : null,
				(limit.getMaxRequestDuration() != null) ? "max-request-duration" : null };
		for (String name : otherTypes) {
			if (name != null) {
				v.add(notInQuota(at, name));
			}
		}
	}

	/**
	 * Check a limit's unit: {@code requests} or a unit name.
	 * @return whether it is one (else a violation naming {@code <at>.unit} was added)
	 */
	private static boolean checkUnitName(String at, @Nullable String unit, List<ConfigurationViolation> v) {
		if (unit != null && LimitDefinition.isUnitName(unit)) {
			return true;
		}
		v.add(new ConfigurationViolation(at + ".unit",
				"must be requests or a unit name (lower-case letters, digits and '-', starting with a letter, at most "
						+ LimitDefinition.MAX_UNIT_LENGTH + " characters), was '" + unit + "'.",
				"leave it out to count requests, or name what the upstream reports, e.g. unit: tokens."));
		return false;
	}

	/**
	 * A quota's period from its configured value.
	 * @param period {@code day}, {@code week}, {@code month} or {@code year} (any case), or a duration in Spring
	 * Boot's formats ({@code 30s}, {@code 12h}, {@code PT12H}) from 1 s to 36,500 days, whole milliseconds
	 * @param zone the time zone of a calendar period
	 * @param firstDayOfWeek the day a week starts on
	 * @return the period
	 * @throws IllegalArgumentException naming what is wrong with the value
	 */
	static QuotaPeriod quotaPeriod(String period, ZoneId zone, DayOfWeek firstDayOfWeek) {
		String value = period.trim();
		for (QuotaPeriodUnit unit : QuotaPeriodUnit.values()) {
			if (unit.name().equalsIgnoreCase(value)) {
				return QuotaPeriod.of(unit, zone, firstDayOfWeek);
			}
		}
		Duration duration;
		try {
			duration = DurationStyle.detectAndParse(value);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("is '" + period + "', neither day, week, month, year nor a duration",
					ex);
		}
		try {
			return QuotaPeriod.fixed(duration);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("is '" + period + "', but " + ex.getMessage(), ex);
		}
	}

	/**
	 * A time zone from its configured value.
	 * @param zone a region ID such as {@code Europe/Berlin}, {@code UTC}, or a fixed offset such as {@code +03:28}
	 * @return the zone, or {@code null} when the value names none
	 */
	static @Nullable ZoneId quotaZone(@Nullable String zone) {
		if (zone == null || zone.isBlank()) {
			return null;
		}
		try {
			return ZoneId.of(zone.trim());
		}
		catch (DateTimeException ex) {
			return null;
		}
	}

	/**
	 * A concurrency limit: max-in-flight slots, each freed at the latest after max-request-duration; the rate
	 * settings do not apply. Its scope may be client or global like any limit's.
	 */
	private static void validateConcurrencyLimit(String at, RateLimitProperties.Limit limit,
			List<ConfigurationViolation> v) {
		if (limit.getScope() == null) {
			v.add(new ConfigurationViolation(at + ".scope", "must be set.",
					"use client (the default: requests in flight per client) or global (requests in flight of the "
							+ "whole endpoint group)."));
		}
		if (limit.getMaxInFlight() < 1 || limit.getMaxInFlight() > MAX_IN_FLIGHT) {
			v.add(new ConfigurationViolation(at + ".max-in-flight",
					"must be between 1 and 1,000,000 requests, was " + limit.getMaxInFlight() + ".",
					"set how many requests may be in flight at once, at least 1 (Redis keeps one entry per "
							+ "request in flight)."));
		}
		Duration duration = limit.getMaxRequestDuration();
		if (duration != null && (duration.toMillis() < 1 || duration.compareTo(MAX_REQUEST_DURATION) > 0)) {
			v.add(new ConfigurationViolation(at + ".max-request-duration",
					"must be between 1ms and 7d, was " + duration + ".",
					"set the longest a request may run, e.g. 30s (the default); a slot never given back frees "
							+ "itself after it."));
		}
		String[] rateOnly = { (limit.getCapacity() != 0) ? "capacity" : null,
				(limit.getRefillTokens() != 0) ? "refill-tokens" : null,
				(limit.getRefillPeriod() != null) ? "refill-period" : null,
				(limit.getLease() != null) ? "lease" : null,
				(limit.getAlgorithm() != null && limit.getAlgorithm() != Algorithm.TOKEN_BUCKET) ? "algorithm" : null };
		for (String name : rateOnly) {
			if (name != null) {
				v.add(rateOnly(at, name));
			}
		}
	}

	/**
	 * A token bucket is kept as one time in microseconds (the GCRA form, see the script): it can refill at most one
	 * token per microsecond, and must fill from empty within {@link LimitDefinition#MAX_FILL_TIME} (so that its time
	 * stays an exact integer).
	 */
	private static void validateTokenBucketTime(String at, RateLimitProperties.Limit limit, Duration period,
			List<ConfigurationViolation> v) {
		double microsPerToken = period.toNanos() / 1000.0 / limit.getRefillTokens();
		if (microsPerToken < 1) {
			v.add(new ConfigurationViolation(at + ".refill-tokens",
					"must be at most one token per microsecond of refill-period (1,000,000 per second), was "
							+ limit.getRefillTokens() + " per " + period + ".",
					"lower the rate, or count in larger units (e.g. a cost per kilobyte instead of per byte)."));
		}
		else if (limit.getCapacity() * microsPerToken > LimitDefinition.MAX_FILL_TIME.toNanos() / 1000.0) {
			v.add(new ConfigurationViolation(at + ".capacity",
					"must fill from empty within 36500 days at refill-tokens per refill-period, was " + limit.getCapacity()
							+ " at " + limit.getRefillTokens() + " per " + period + ".",
					"lower the capacity or raise the refill rate."));
		}
	}

}
