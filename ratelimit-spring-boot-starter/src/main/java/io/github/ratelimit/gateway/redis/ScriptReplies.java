package io.github.ratelimit.gateway.redis;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.gateway.chain.LeaseStore.Lease;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.QuotaState;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * The rate limit script's replies (see the contract at the head of {@code dispatch.lua}), decoded: a check's into a
 * {@link RateLimitDecision}, a lease's into a {@link Lease}, a quota read's into {@link QuotaState}s, a settle's into
 * the usage it changed. The reply to a check, acquire, lease or settle that Redis refused past its deadline fails
 * with a {@link CompletionException} wrapping a {@link TimeoutException}; a reply of another shape fails with a
 * {@link CompletionException} wrapping an {@link IllegalStateException} that quotes it.
 */
final class ScriptReplies {

	/** The script's reply to a check, acquire or lease that Redis ran past its deadline. */
	static final long EXPIRED = -1;

	private ScriptReplies() {
	}

	static Lease toLease(PlanLimits limits, List<?> reply) {
		expired(reply);
		int count = limits.limits().size();
		if (reply == null || reply.size() != 3 + 4 * count) {
			throw new CompletionException(
					new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
		}
		return new Lease(toDecision(limits, reply.subList(0, 1 + 4 * count)), number(reply, 1 + 4 * count),
				number(reply, 2 + 4 * count));
	}

	static RateLimitDecision toDecision(PlanLimits limits, List<?> reply) {
		expired(reply);
		int count = limits.limits().size();
		if (reply == null || reply.size() != 1 + 4 * count) {
			throw new CompletionException(
					new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
		}
		List<LimitStatus> statuses = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			int at = 1 + 4 * i;
			statuses.add(new LimitStatus(limits.limits().get(i), number(reply, at) == 1L, number(reply, at + 1),
					number(reply, at + 2), number(reply, at + 3)));
		}
		return RateLimitDecision.shared(limits, number(reply, 0) == 1L, statuses);
	}

	static List<QuotaState> toQuotaStates(PlanLimits limits, List<?> reply) {
		int count = limits.limits().size();
		if (reply == null || reply.size() != 3 * count) {
			throw new CompletionException(
					new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
		}
		List<QuotaState> states = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			LimitDefinition limit = limits.limits().get(i);
			if (limit.isQuota()) {
				states.add(new QuotaState(limit, number(reply, 3 * i), micros(number(reply, 3 * i + 1)),
						micros(number(reply, 3 * i + 2))));
			}
		}
		return states;
	}

	/**
	 * What a settlement changed in the limits counting usage, from the script's reply (per limit, the tokens taken or,
	 * negative, given back): the least any of them took.
	 * @throws CompletionException wrapping a {@link TimeoutException} when the reply is the script's "expired" (an
	 * empty array): Redis ran the settle after its deadline, and it read and wrote nothing
	 */
	static long toUsageChange(PlanLimits limits, List<?> reply) {
		List<LimitDefinition> list = limits.limits();
		if (reply.isEmpty()) {
			throw new CompletionException(new TimeoutException(
					"Redis ran the settlement after its deadline: refused by the script, nothing changed"));
		}
		if (reply.size() != list.size()) {
			throw new IllegalStateException("Unexpected reply from the rate limit script: " + reply);
		}
		long least = Long.MAX_VALUE;
		for (int i = 0; i < list.size(); i++) {
			if (list.get(i).isUsage()) {
				least = Math.min(least, number(reply, i));
			}
		}
		return (least == Long.MAX_VALUE) ? 0 : least;
	}

	/**
	 * Fails when the reply is the script's "expired" (the integer -1): Redis ran a check, acquire or lease after its
	 * deadline, and it read and wrote nothing.
	 */
	private static void expired(List<?> reply) {
		if (reply != null && reply.size() == 1 && Long.valueOf(EXPIRED).equals(reply.get(0))) {
			throw new CompletionException(new TimeoutException(
					"Redis ran the rate limit check after its deadline: refused by the script, nothing consumed"));
		}
	}

	static Instant micros(long micros) {
		return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
	}

	static long number(List<?> reply, int index) {
		Object value = reply.get(index);
		if (value instanceof Long number) {
			return number;
		}
		throw new CompletionException(
				new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
	}

}
