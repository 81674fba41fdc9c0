package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.jspecify.annotations.Nullable;

/**
 * The layer of the limiter chain in front of the {@linkplain FailurePolicyLimiter failure policy} that remembers
 * denials of the shared store until their Retry-After, so a client far over its limit costs no Redis call per
 * request: while remembered, the same client's requests of the same cost in the same group are denied locally
 * (source {@link RateLimitDecision.Source#CACHED}), even while the breaker is open.
 *
 * <p>An entry is timed from the check's start (before the Redis call was sent) and kept 1 ms less than its
 * Retry-After (a quota's denial at most {@link #QUOTA_DENIAL_HOLD}); a denial by a concurrency limit or a limit
 * counting usage is never remembered. Bounded by a Caffeine cache of
 * {@code maxEntries}; entries expire at their Retry-After. Why this never denies what Redis would allow:
 * {@code src/docs/design/limiter-chain.md}.
 *
 * <p>A remembered denial ends earlier when the client changes in the store ({@link #forget(ClientChange)}: an
 * operator's reset or top-up through any instance, see {@link ClientChanges}) or when changes may have been missed
 * ({@link #clear()}). A denial whose check started before such a forget and answered after it is not remembered: it
 * may be the store's answer from before the change.
 */
public class OverLimitCache implements LimiterChain {

	/**
	 * Longest a denial by a {@linkplain io.github.ratelimit.gateway.limits.Algorithm#QUOTA quota} is remembered,
	 * however far its period's end: the bound of a top-up or reset through another instance's endpoint when no
	 * {@link ClientChanges} carry it here (with them, it ends such a denial, and any other, within their own bound).
	 */
	public static final Duration QUOTA_DENIAL_HOLD = Duration.ofSeconds(5);

	private final LimiterChain next;

	private final CheckListener listener;

	private final Cache<Key, Denial> denials;

	/** Counts forgets: a check remembers its denial only if none happened since it started. */
	private final AtomicLong forgets = new AtomicLong();

	/**
	 * Create a cache in front of the rest of the chain.
	 * @param next decides what is not remembered (the failure policy)
	 * @param maxEntries most denials remembered (at least 1)
	 * @param listener told of the duration of every check answered from the cache
	 */
	public OverLimitCache(LimiterChain next, long maxEntries, CheckListener listener) {
		this.next = next;
		this.listener = listener;
		// the cache's upkeep runs on the thread that uses it: no other thread is woken by a check
		this.denials = Caffeine.newBuilder()
			.maximumSize(maxEntries)
			.executor(Runnable::run)
			.expireAfter(new Expiry<Key, Denial>() {
				@Override
				public long expireAfterCreate(Key key, Denial denial, long currentTime) {
					return Math.max(0, denial.untilNanos - System.nanoTime());
				}

				@Override
				public long expireAfterUpdate(Key key, Denial denial, long currentTime, long currentDuration) {
					return expireAfterCreate(key, denial, currentTime);
				}

				@Override
				public long expireAfterRead(Key key, Denial denial, long currentTime, long currentDuration) {
					return currentDuration;
				}
			})
			.build();
	}

	/**
	 * {@inheritDoc}
	 * <p>A remembered denial is answered at once; otherwise the next layer decides and a denial of the shared store
	 * is remembered. The future returned is the next layer's own, so cancelling it abandons that check.
	 */
	@Override
	public CompletableFuture<RateLimitDecision> check(RateLimitRequest request) {
		long start = System.nanoTime();
		RateLimitDecision remembered = lookup(request.client(), request.limits(), request.cost(), start);
		if (remembered != null) {
			this.listener.recordCheck(remembered.source(), System.nanoTime() - start);
			return CompletableFuture.completedFuture(remembered);
		}
		long forgetsBefore = this.forgets.get();
		// one clock per check: the failure policy's deadline counts from this start
		CompletableFuture<RateLimitDecision> decision = (this.next instanceof FailurePolicyLimiter policy)
				? policy.check(request, start) : this.next.check(request);
		decision.thenAccept((answer) -> {
			// a forget since the check started: the store may have answered before the change it was for
			if (!answer.allowed() && this.forgets.get() == forgetsBefore) {
				remember(request.client(), request.limits(), request.cost(), start, answer);
			}
		});
		return decision;
	}

	/**
	 * A remembered denial for this request, with its retry-after and time-until-full shortened by the time elapsed.
	 * @param client the client
	 * @param limits the plan's limits in the group
	 * @param cost the request's cost
	 * @param nowNanos {@link System#nanoTime()} now
	 * @return the denial (source {@link RateLimitDecision.Source#CACHED}), or {@code null} if none applies
	 */
	public @Nullable RateLimitDecision lookup(ClientKey client, PlanLimits limits, Cost cost, long nowNanos) {
		Denial denial = this.denials.getIfPresent(key(client, limits));
		if (denial == null || !denial.cost.equals(cost) || !denial.decision.limits().equals(limits)
				|| nowNanos - denial.untilNanos >= 0) {
			return null;
		}
		long elapsedMs = (nowNanos - denial.startNanos) / 1_000_000;
		List<LimitStatus> statuses = new ArrayList<>(denial.decision.statuses().size());
		for (LimitStatus status : denial.decision.statuses()) {
			statuses.add(new LimitStatus(status.limit(), status.satisfied(), status.remaining(),
					status.satisfied() ? 0 : Math.max(1, status.retryAfterMillis() - elapsedMs),
					Math.max(0, status.resetMillis() - elapsedMs)));
		}
		return new RateLimitDecision(limits, false, statuses, RateLimitDecision.Source.CACHED);
	}

	/**
	 * Remember a denial of the shared store.
	 * @param client the client
	 * @param limits the plan's limits in the group
	 * @param cost the request's cost
	 * @param startNanos {@link System#nanoTime()} from before the call to the shared store
	 * @param decision the denial
	 */
	public void remember(ClientKey client, PlanLimits limits, Cost cost, long startNanos, RateLimitDecision decision) {
		long holdMs = decision.retryAfterMillis() - 1;
		if (deniedByQuota(decision)) {
			holdMs = Math.min(holdMs, QUOTA_DENIAL_HOLD.toMillis());
		}
		if (decision.allowed() || decision.source() != RateLimitDecision.Source.SHARED || holdMs <= 0
				|| deniedByConcurrencyOrUsage(decision)) {
			return;
		}
		this.denials.put(key(client, limits), new Denial(decision, cost, startNanos, startNanos + holdMs * 1_000_000));
	}

	/**
	 * Whether a limit that can make room before its retry-after denied: a concurrency limit (a slot frees when a
	 * request completes) or a limit counting usage (a settlement gives back what an answer did not use).
	 */
	private static boolean deniedByConcurrencyOrUsage(RateLimitDecision decision) {
		for (LimitStatus status : decision.statuses()) {
			if (!status.satisfied() && (status.limit().isConcurrency() || status.limit().isUsage())) {
				return true;
			}
		}
		return false;
	}

	/** Whether a quota denied: an operator may top it up or reset it on any instance before its period ends. */
	private static boolean deniedByQuota(RateLimitDecision decision) {
		for (LimitStatus status : decision.statuses()) {
			if (!status.satisfied() && status.limit().isQuota()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Forget the denial of a client in a group (after an operator reset).
	 * @param client the client
	 * @param limits the plan's limits in the group
	 */
	public void forget(ClientKey client, PlanLimits limits) {
		this.forgets.incrementAndGet();
		this.denials.invalidate(key(client, limits));
	}

	/**
	 * Forget the denial of a client that changed in the store, whatever its plan.
	 * @param change the client and group
	 */
	public void forget(ClientChange change) {
		this.forgets.incrementAndGet();
		this.denials.invalidate(new Key(change.group(), change.kind(), change.id()));
	}

	/** Forget every remembered denial. */
	public void clear() {
		this.forgets.incrementAndGet();
		this.denials.invalidateAll();
	}

	/**
	 * Number of denials remembered.
	 * @return the estimated count
	 */
	public long size() {
		this.denials.cleanUp();
		return this.denials.estimatedSize();
	}

	private static Key key(ClientKey client, PlanLimits limits) {
		return new Key(limits.group(), client.kind(), client.id());
	}

	/** A client in a group (no string built per lookup). */
	private record Key(String group, ClientKey.Kind kind, String id) {
	}

	private record Denial(RateLimitDecision decision, Cost cost, long startNanos, long untilNanos) {
	}

}
