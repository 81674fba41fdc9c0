package io.github.ratelimit.accuracy;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * The plan under test: {@code capacity} tokens per {@code window} with one algorithm. As a token bucket: capacity
 * {@code capacity}, refilled with {@code capacity} per {@code window}; the rate is the same for every algorithm.
 *
 * @param algorithm the algorithm
 * @param capacity tokens per window (the token bucket's burst)
 * @param window the window (the token bucket's refill period)
 */
public record Plan(Algorithm algorithm, long capacity, Duration window) {

	/** The one client whose traffic every instance sends. */
	static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.API_KEY, "accuracy-client", "plan");

	/**
	 * The plan's limits as the starter enforces them.
	 * @return one limit
	 */
	PlanLimits limits() {
		return limits(0);
	}

	/**
	 * The plan's limits as the starter enforces them, with token leases ({@code lease: N%}).
	 * @param leaseBudgetPercent the lease budget in percent of the capacity, 0 for none (token bucket only)
	 * @return one limit
	 */
	PlanLimits limits(double leaseBudgetPercent) {
		LimitDefinition limit = (this.algorithm == Algorithm.TOKEN_BUCKET)
				? new LimitDefinition("plan", this.capacity, this.capacity, this.window)
				: LimitDefinition.window("plan", this.algorithm, this.capacity, this.window);
		if (leaseBudgetPercent > 0) {
			limit = limit.withLeaseBudget(new LeaseBudget(leaseBudgetPercent));
		}
		return new PlanLimits("plan", "accuracy", List.of(limit));
	}

	/**
	 * Tokens per second.
	 * @return the plan's rate
	 */
	double ratePerSecond() {
		return this.capacity * 1e9 / this.window.toNanos();
	}

	/**
	 * The window in microseconds.
	 * @return microseconds
	 */
	long windowMicros() {
		return this.window.toNanos() / 1000;
	}

	/**
	 * Parse an algorithm from its configuration name ({@code sliding-window-log}) or constant name.
	 * @param name the name
	 * @return the algorithm
	 */
	static Algorithm parseAlgorithm(String name) {
		return Algorithm.valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
	}

}
