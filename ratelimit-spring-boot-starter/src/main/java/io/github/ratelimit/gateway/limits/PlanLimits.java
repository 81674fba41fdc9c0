package io.github.ratelimit.gateway.limits;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The limits that apply to one plan in one endpoint group, all checked together: a request is allowed only if
 * every limit allows it, and a denied request consumes from none of them. Immutable, with value equality: two
 * lookups of the same configuration are equal. The forms derived from it (its {@linkplain #scoped() split by scope},
 * a store's encoded arguments through {@link #compiled}) are computed once per object, when first asked for, and
 * held by it.
 */
public final class PlanLimits {

	private final String plan;

	private final String group;

	private final List<LimitDefinition> limits;

	private final long smallestCapacity;

	private final @Nullable String usageUnit;

	private final long leaseTokens;

	private final boolean hasConcurrencyLimits;

	private final boolean hasGlobalLimits;

	private final boolean hasQuotas;

	private volatile @Nullable ScopedLimits scoped;

	/** Forms compiled from these limits: key, value, key, value... (copy on write; one or two entries). */
	private volatile Object[] compiled = new Object[0];

	/**
	 * Create the limits of a plan in a group.
	 * @param plan the plan name
	 * @param group the endpoint group name
	 * @param limits the limits, in configuration order, not empty (copied)
	 * @throws IllegalArgumentException if {@code limits} is empty, or its usage limits count more than one unit
	 */
	public PlanLimits(String plan, String group, List<LimitDefinition> limits) {
		this.plan = plan;
		this.group = group;
		this.limits = List.copyOf(limits);
		if (this.limits.isEmpty()) {
			throw new IllegalArgumentException("No limits for plan '" + plan + "' in group '" + group + "'");
		}
		long smallest = LimitDefinition.MAX_TOKENS;
		String unit = null;
		long lease = Long.MAX_VALUE;
		boolean concurrency = false;
		boolean global = false;
		boolean quotas = false;
		for (LimitDefinition limit : this.limits) {
			if (limit.isUsage()) {
				if (unit != null && !unit.equals(limit.unit())) {
					throw new IllegalArgumentException("Plan '" + plan + "' counts two units of usage in group '" + group
							+ "': '" + unit + "' and '" + limit.unit() + "' (a route measures one)");
				}
				unit = limit.unit();
			}
			else if (!limit.isConcurrency()) {
				smallest = Math.min(smallest, limit.capacity());
			}
			lease = Math.min(lease, limit.leaseTokens());
			concurrency |= limit.isConcurrency();
			global |= limit.isGlobal();
			quotas |= limit.isQuota();
		}
		this.smallestCapacity = smallest;
		this.usageUnit = unit;
		this.leaseTokens = lease;
		this.hasConcurrencyLimits = concurrency;
		this.hasGlobalLimits = global;
		this.hasQuotas = quotas;
	}

	/**
	 * Whether any of these limits is a {@link Algorithm#QUOTA quota}, whose period (and so its script arguments and
	 * its {@code w}) moves with the clock.
	 * @return {@code true} with at least one quota
	 */
	public boolean hasQuotas() {
		return this.hasQuotas;
	}

	/**
	 * The time around an instant during which every quota among these limits stays in one period: from the latest
	 * start to the earliest end of their periods containing {@code instant}. What depends on the quotas' periods (the
	 * script's boundaries, {@code w}) holds for any instant in it.
	 * @param instant the gateway's time
	 * @return the interval, containing {@code instant}; {@link Instant#MIN} to {@link Instant#MAX} without quotas
	 */
	public QuotaPeriod.Interval quotaPeriodsAt(Instant instant) {
		Instant start = Instant.MIN;
		Instant end = Instant.MAX;
		for (LimitDefinition limit : this.limits) {
			QuotaPeriod period = limit.quotaPeriod();
			if (period != null) {
				QuotaPeriod.Interval current = period.periodAt(instant);
				start = current.start().isAfter(start) ? current.start() : start;
				end = current.end().isBefore(end) ? current.end() : end;
			}
		}
		return new QuotaPeriod.Interval(start, end);
	}

	/**
	 * The plan.
	 * @return the plan name
	 */
	public String plan() {
		return this.plan;
	}

	/**
	 * The endpoint group.
	 * @return the endpoint group name
	 */
	public String group() {
		return this.group;
	}

	/**
	 * The limits.
	 * @return the limits, in configuration order, not empty, unmodifiable
	 */
	public List<LimitDefinition> limits() {
		return this.limits;
	}

	/**
	 * The smallest capacity of these rate limits counting requests: no request may cost more. A concurrency limit
	 * takes one slot per request whatever its cost, and a usage limit counts its own unit, so neither counts.
	 * @return the smallest capacity in tokens; {@link LimitDefinition#MAX_TOKENS} when no limit is a rate limit
	 * counting requests
	 */
	public long smallestCapacity() {
		return this.smallestCapacity;
	}

	/**
	 * The unit of these limits' usage limits (one unit per plan and group: a route measures one).
	 * @return the unit, e.g. {@code tokens}; {@code null} when every limit counts requests
	 */
	public @Nullable String usageUnit() {
		return this.usageUnit;
	}

	/**
	 * Whether any of these limits counts a unit of usage, so that an admitted request reserves an estimate and is
	 * settled once its answer is over.
	 * @return {@code usageUnit() != null}
	 */
	public boolean hasUsageLimits() {
		return this.usageUnit != null;
	}

	/**
	 * The most tokens one lease of these limits may hold: the smallest {@link LimitDefinition#leaseTokens()} of them,
	 * so 0 (no leases, every request asks the shared store) unless every limit takes leases.
	 * @return tokens, 0 or more
	 */
	public long leaseTokens() {
		return this.leaseTokens;
	}

	/**
	 * Whether any of these limits is a concurrency limit, so that an admitted request holds slots until its response
	 * completes ({@link io.github.ratelimit.gateway.chain.RateLimitDecision#slots()}).
	 * @return {@code true} if at least one limit counts requests in flight
	 */
	public boolean hasConcurrencyLimits() {
		return this.hasConcurrencyLimits;
	}

	/**
	 * Whether any of these limits is shared by every client of the group ({@link LimitScope#GLOBAL}).
	 * @return {@code true} if at least one limit is global
	 */
	public boolean hasGlobalLimits() {
		return this.hasGlobalLimits;
	}

	/**
	 * These limits split by scope, computed on first use and held.
	 * @return the split
	 * @throws IllegalArgumentException if no limit is global ({@link #hasGlobalLimits()} is {@code false})
	 */
	public ScopedLimits scoped() {
		ScopedLimits split = this.scoped;
		if (split == null) {
			split = ScopedLimits.of(this);
			this.scoped = split;
		}
		return split;
	}

	/**
	 * A form compiled from these limits (e.g. a store's encoded arguments), computed on first use and held by this
	 * object, so that it is computed once per limits snapshot. Two threads asking at once may both compute it; one
	 * result is kept.
	 * @param compiler computes the form; a constant (the key of the form held: compare by identity)
	 * @param <T> the form's type
	 * @return the form, never {@code null}
	 */
	@SuppressWarnings("unchecked")
	public <T> T compiled(Function<PlanLimits, T> compiler) {
		Object[] held = this.compiled;
		for (int i = 0; i < held.length; i += 2) {
			if (held[i] == compiler) {
				return (T) held[i + 1];
			}
		}
		T form = Objects.requireNonNull(compiler.apply(this), "compiled form");
		synchronized (this) {
			Object[] now = this.compiled;
			for (int i = 0; i < now.length; i += 2) {
				if (now[i] == compiler) {
					return (T) now[i + 1];
				}
			}
			Object[] more = Arrays.copyOf(now, now.length + 2);
			more[now.length] = compiler;
			more[now.length + 1] = form;
			this.compiled = more;
		}
		return form;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (this == other) || (other instanceof PlanLimits that && Objects.equals(this.plan, that.plan)
				&& Objects.equals(this.group, that.group) && this.limits.equals(that.limits));
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.plan, this.group, this.limits);
	}

	@Override
	public String toString() {
		return "PlanLimits[plan=" + this.plan + ", group=" + this.group + ", limits=" + this.limits + "]";
	}

}
