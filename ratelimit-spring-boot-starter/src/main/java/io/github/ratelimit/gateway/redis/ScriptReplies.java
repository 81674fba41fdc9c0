package io.github.ratelimit.gateway.redis;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;

import io.github.ratelimit.gateway.chain.LeaseStore.Lease;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.QuotaState;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * The rate limit script's replies (see the contract at the head of {@code dispatch.lua}), decoded: a check's into a
 * {@link RateLimitDecision}, a lease's into a {@link Lease}, a quota read's into {@link QuotaState}s. A reply of
 * another shape fails with a {@link CompletionException} wrapping an {@link IllegalStateException} that quotes it.
 */
final class ScriptReplies {

	private ScriptReplies() {
	}

	static Lease toLease(PlanLimits limits, List<?> reply) {
		int count = limits.limits().size();
		if (reply == null || reply.size() != 3 + 4 * count) {
			throw new CompletionException(
					new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
		}
		return new Lease(toDecision(limits, reply.subList(0, 1 + 4 * count)), number(reply, 1 + 4 * count),
				number(reply, 2 + 4 * count));
	}

	static RateLimitDecision toDecision(PlanLimits limits, List<?> reply) {
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
