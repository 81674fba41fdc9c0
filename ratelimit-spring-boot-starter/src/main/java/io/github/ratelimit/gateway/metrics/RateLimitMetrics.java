package io.github.ratelimit.gateway.metrics;

import java.util.concurrent.TimeoutException;

import io.github.ratelimit.gateway.chain.CheckListener;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.redis.RedisScriptExecutor;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;

/**
 * Observes the limiter: the decisions as enforced, and (as the failure policy's {@link CheckListener}) the
 * duration of every check and every failed store call. The default implementation publishes Micrometer meters when
 * a {@code MeterRegistry} exists ({@link MicrometerRateLimitMetrics}, names and tags documented there); otherwise
 * nothing is recorded.
 */
public interface RateLimitMetrics extends CheckListener {

	/** Records nothing. */
	RateLimitMetrics NONE = new RateLimitMetrics() {
	};

	/**
	 * Record one decision as enforced (or, in shadow mode, observed).
	 * @param route the route id
	 * @param group the endpoint group
	 * @param decision the decision
	 * @param shadow whether the route runs in shadow mode (a refusal is then let through)
	 */
	default void recordDecision(String route, String group, RateLimitDecision decision, boolean shadow) {
	}

	/**
	 * Record the thresholds of its quotas that a decision crossed: only a request admitted by the shared store
	 * ({@link RateLimitDecision.Source#SHARED}) moves a quota's count, see {@link #crossesQuotaThreshold}.
	 * @param group the endpoint group
	 * @param decision the decision, as enforced
	 * @param cost what the request took: its tokens from each quota counting requests, its reservation from a quota
	 * counting usage
	 */
	default void recordQuotaCrossings(String group, RateLimitDecision decision, Cost cost) {
	}

	/**
	 * Record that an admitted request of a group now holds concurrency slots, until the returned action runs.
	 * @param group the endpoint group
	 * @return run once when the request gives its slots back (the front end does it with the release)
	 */
	default Runnable recordInFlight(String group) {
		return () -> {
		};
	}

	/**
	 * Record units of usage reserved by requests whose answers are not over yet (negative: settled).
	 * @param group the endpoint group
	 * @param unit the unit of the group's limits counting usage
	 * @param units units reserved (positive) or settled (negative)
	 */
	default void recordUsageReserved(String group, String unit, long units) {
	}

	/**
	 * Record the settlement of a request of a route with {@code usage}: what it reserved when admitted, what its
	 * answer reported, and what the store charged once the answer was over.
	 * @param route the route id
	 * @param group the endpoint group
	 * @param plan the client's plan
	 * @param unit the unit of the group's limits counting usage, e.g. {@code tokens}
	 * @param reserved units reserved
	 * @param reported units the request was settled with: what its answer reported, its reservation when it reported
	 * none usable, 0 for an answer that did not count
	 * @param charged units the store charged in the end, as its limits count them (0 for an answer that did not count,
	 * unless a limit could not take its reservation back); {@code reported - charged}, when above 0, is forgiven
	 */
	default void recordUsageSettled(String route, String group, String plan, String unit, long reserved,
			long reported, long charged) {
	}

	/**
	 * Record an answer whose usage could not be read (the request was charged its reservation), or was above the
	 * capacity of the route's limits counting usage (charged that).
	 * @param route the route id
	 * @param group the endpoint group
	 * @param problem {@code missing}, {@code not-json}, {@code not-a-number}, {@code negative}, {@code too-large} or {@code encoded}
	 */
	default void recordUsageProblem(String route, String group, String problem) {
	}

	/**
	 * Record a request shed by an upstream protection (or, in shadow mode, one that would have been).
	 * @param route the route id
	 * @param group the endpoint group
	 * @param protection the protection's name
	 * @param priority the request's priority
	 * @param shadow whether the request was forwarded all the same
	 */
	default void recordShed(String route, String group, String protection, Priority priority, boolean shadow) {
	}

	/**
	 * The kinds of limit a denial violated: {@code rate} (a token bucket or window limit) and {@code concurrency}.
	 * @param decision a decided denial
	 * @return whether [a rate limit, a concurrency limit] was violated
	 */
	static boolean[] violatedKinds(RateLimitDecision decision) {
		boolean[] kinds = new boolean[2];
		for (var status : decision.statuses()) {
			if (!status.satisfied()) {
				kinds[status.limit().isConcurrency() ? 1 : 0] = true;
			}
		}
		return kinds;
	}

	/**
	 * The count of a quota's limit at which it reaches a percentage of it: {@code ceil(limit * percent / 100)} in
	 * exact integer arithmetic.
	 * @param limit the quota's limit (1 to 2^53)
	 * @param percent the percentage (1 to 100)
	 * @return the count, 1 to {@code limit}
	 */
	static long quotaThresholdCount(long limit, int percent) {
		return (limit * percent + 99) / 100;
	}

	/**
	 * Whether an admitted request moved a quota's used count from below a percentage of its limit to at or above it:
	 * {@code used - taken < quotaThresholdCount(limit, percent) <= used}, where {@code used = limit - remaining} is
	 * the count after the request.
	 * @param limit the quota's limit (1 to 2^53)
	 * @param remaining what the quota had left after the request (0 to {@code limit})
	 * @param taken what the request took from the quota (0 or more): its tokens, or its reservation for a quota
	 * counting usage
	 * @param percent the percentage (1 to 100)
	 * @return whether this request crossed it
	 */
	static boolean crossesQuotaThreshold(long limit, long remaining, long taken, int percent) {
		long used = limit - remaining;
		long threshold = quotaThresholdCount(limit, percent);
		return used - taken < threshold && threshold <= used;
	}

	/**
	 * The outcome label of a decision: {@code allowed}, {@code denied}, {@code fallback-allowed},
	 * {@code fallback-denied}, {@code unchecked} (let through, no limiter available), {@code failed-closed}, and in
	 * shadow mode {@code shadow-denied} for any refusal that was let through.
	 * @param decision the decision
	 * @param shadow whether the route runs in shadow mode
	 * @return the outcome label
	 */
	static String outcome(RateLimitDecision decision, boolean shadow) {
		if (shadow && !decision.allowed()) {
			return "shadow-denied";
		}
		return switch (decision.source()) {
			case SHARED, CACHED, LEASED -> decision.allowed() ? "allowed" : "denied";
			case LOCAL_FALLBACK -> decision.allowed() ? "fallback-allowed" : "fallback-denied";
			case NONE -> decision.allowed() ? "unchecked" : "failed-closed";
		};
	}

	/**
	 * The source label of a decision: {@code redis}, {@code lease}, {@code over-limit-cache}, {@code local-fallback} or
	 * {@code none}.
	 * @param source the source
	 * @return the label
	 */
	static String source(RateLimitDecision.Source source) {
		return switch (source) {
			case SHARED -> "redis";
			case LEASED -> "lease";
			case CACHED -> "over-limit-cache";
			case LOCAL_FALLBACK -> "local-fallback";
			case NONE -> "none";
		};
	}

	/**
	 * The kind label of a failed store call: {@code timeout}, {@code circuit-open}, {@code connection},
	 * {@code script} (Redis answered with an error) or {@code other}.
	 * @param error the failure
	 * @return the label
	 */
	static String errorKind(Throwable error) {
		if (error instanceof TimeoutException) {
			return "timeout";
		}
		if (error instanceof CallNotPermittedException) {
			return "circuit-open";
		}
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			String name = cause.getClass().getName();
			if (name.endsWith("CommandTimeoutException") || name.endsWith("QueryTimeoutException")) {
				return "timeout"; // Lettuce's (or Spring Data's) own command timeout
			}
			if (name.endsWith("ConnectionException") || name.endsWith("ConnectionFailureException")
					|| cause instanceof java.net.ConnectException || cause instanceof java.io.IOException) {
				return "connection";
			}
			if (RedisScriptExecutor.refusedWhileReconnecting(cause)) {
				return "connection";
			}
			if (isScriptError(cause.getClass())) {
				return "script";
			}
		}
		return "other";
	}

	private static boolean isScriptError(Class<?> type) {
		for (Class<?> c = type; c != null; c = c.getSuperclass()) {
			if (c.getName().equals("io.lettuce.core.RedisCommandExecutionException")) {
				return true;
			}
		}
		return false;
	}

}
