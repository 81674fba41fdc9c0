package io.github.ratelimit.gateway.chain;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.ScopedLimits;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Adds {@link LimitScope#GLOBAL group-wide} limits to a store that checks one client's limits at a time (the Redis
 * store), keeping the all-or-nothing rule across scopes.
 *
 * <p>Limits with only the client scope go straight to the store: one call. With global limits, a check is two calls
 * in sequence:
 * <ol>
 * <li>the client's own limits, under the client's key; a denial stops here (the group-wide limits are then only
 * read, with cost 0, for the header fields);</li>
 * <li>the global limits, under {@link ClientKey#everyone(String)}; if they deny, the client's limits are given back
 * ({@link RateLimitStore#refund}, and the slots of its concurrency limits released) before answering.</li>
 * </ol>
 * An allowed decision holds the slots of both calls. The decision lists every limit in configuration order; when
 * the global limits deny, the client limits' states are reported as after the refund ({@code remaining} plus the
 * cost, capped at capacity).
 *
 * <p>An error of the first call is passed on; an error of the second call first gives the client's tokens back
 * (best effort) and is then passed on. A refund that fails is logged at debug. Why two calls:
 * {@code src/docs/design/limiter-chain.md}.
 */
public class ScopedRateLimiter implements StoreLayer {

	private static final Logger logger = LoggerFactory.getLogger(ScopedRateLimiter.class);

	private final StoreLayer store;

	/**
	 * Wrap a store.
	 * @param store checks, refunds and resets the limits of one {@link ClientKey} atomically (e.g. the Redis store)
	 */
	public ScopedRateLimiter(RateLimitStore store) {
		this.store = StoreLayer.of(store);
	}

	@Override
	public CompletableFuture<RateLimitDecision> tryConsume(@Nullable Deadline deadline, ClientKey client,
			PlanLimits limits, Cost cost) {
		if (!limits.hasGlobalLimits()) {
			return this.store.tryConsume(deadline, client, limits, cost);
		}
		ScopedLimits scoped = limits.scoped();
		ClientKey everyone = ClientKey.everyone(client.plan());
		PlanLimits own = scoped.client();
		if (own == null) {
			return this.store.tryConsume(deadline, everyone, scoped.global(), cost)
				.thenApply((shared) -> decision(scoped, shared.allowed(), null, shared.statuses())
					.withSlots(shared.slots())
					.withReservation(shared.reservation()));
		}
		return this.store.tryConsume(deadline, client, own, cost).thenCompose((taken) -> {
			if (!taken.allowed()) {
				// denied by its own limits: the group-wide quota is only read (cost 0), for the header fields
				return this.store.tryConsume(deadline, everyone, scoped.global(), Cost.NONE)
					.handle((shared, ex) -> decision(scoped, false, taken.statuses(),
							(ex != null) ? null : shared.statuses()));
			}
			return Futures.call(() -> this.store.tryConsume(deadline, everyone, scoped.global(), cost)).handle((shared, ex) -> {
				if (ex != null) {
					return giveBack(client, own, cost, taken)
						.thenCompose((ignored) -> CompletableFuture.<RateLimitDecision>failedFuture(Futures.unwrap(ex)));
				}
				if (shared.allowed()) {
					return CompletableFuture.completedFuture(decision(scoped, true, taken.statuses(), shared.statuses())
						.withSlots(HeldSlots.both(taken.slots(), shared.slots()))
						.withReservation(Reservation.both(taken.reservation(), shared.reservation())));
				}
				return giveBack(client, own, cost, taken)
					.thenApply((ignored) -> decision(scoped, false, givenBack(taken.statuses(), cost), shared.statuses()));
			}).thenCompose(Function.identity());
		});
	}

	/**
	 * Give back an allowed check's tokens: the client's limits under the client's key and the global limits under
	 * the group-wide key, concurrently.
	 */
	@Override
	public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
		if (!limits.hasGlobalLimits()) {
			return this.store.refund(client, limits, cost);
		}
		ScopedLimits scoped = limits.scoped();
		CompletableFuture<Void> shared = this.store.refund(ClientKey.everyone(client.plan()), scoped.global(), cost);
		return (scoped.client() != null)
				? CompletableFuture.allOf(this.store.refund(client, scoped.client(), cost), shared) : shared;
	}

	/**
	 * Reset the client's own limits only. The buckets of global limits are shared by every client of the group and
	 * are left alone (an operator unblocking one client must not hand the whole group a fresh quota).
	 * @return the number of the client's buckets removed (0 when every limit of the group is global)
	 */
	@Override
	public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
		if (!limits.hasGlobalLimits()) {
			return this.store.reset(client, limits);
		}
		ScopedLimits scoped = limits.scoped();
		return (scoped.client() != null) ? this.store.reset(client, scoped.client())
				: CompletableFuture.completedFuture(0L);
	}

	/**
	 * Read the client's own quotas under the client's key and the global ones under the group-wide key (two calls,
	 * concurrently, when the group has both).
	 * @return the quotas' states in configuration order
	 */
	@Override
	public CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
		if (!limits.hasGlobalLimits()) {
			return this.store.readQuotas(client, limits);
		}
		ScopedLimits scoped = limits.scoped();
		PlanLimits own = scoped.client();
		CompletableFuture<List<QuotaState>> shared = scoped.global().hasQuotas()
				? this.store.readQuotas(ClientKey.everyone(client.plan()), scoped.global())
				: CompletableFuture.completedFuture(List.of());
		CompletableFuture<List<QuotaState>> mine = (own != null && own.hasQuotas()) ? this.store.readQuotas(client, own)
				: CompletableFuture.completedFuture(List.of());
		return mine.thenCombine(shared, (first, second) -> {
			List<QuotaState> states = new ArrayList<>(first);
			states.addAll(second);
			states.sort(Comparator.comparingInt((state) -> limits.limits().indexOf(state.limit())));
			return states;
		});
	}

	/**
	 * Top up one of the client's own quotas. A global quota is shared by every client of the group and is never
	 * topped up for one of them (as {@link #reset} leaves it alone).
	 * @return as {@link RateLimitStore#topUp}; completed with an {@link IllegalArgumentException} for a global quota
	 */
	@Override
	public CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota, long tokens) {
		if (quota.isGlobal()) {
			return CompletableFuture.failedFuture(new IllegalArgumentException("quota '" + quota.policyName()
					+ "' is global (shared by every client of the group): it is not topped up for one client"));
		}
		if (!limits.hasGlobalLimits()) {
			return this.store.topUp(client, limits, quota, tokens);
		}
		PlanLimits own = limits.scoped().client();
		return (own != null) ? this.store.topUp(client, own, quota, tokens)
				: CompletableFuture.failedFuture(new IllegalArgumentException(
						"quota '" + quota.policyName() + "' is not among the client's own limits"));
	}

	/**
	 * The refund of the client's limits, completing normally whatever its outcome (a failure is logged); the slots
	 * their check took are given back too.
	 */
	private CompletableFuture<Void> giveBack(ClientKey client, PlanLimits own, Cost cost, RateLimitDecision taken) {
		taken.slots().abandon();
		return Futures.call(() -> this.store.refund(client, own, cost)).handle((ignored, ex) -> {
			if (ex != null) {
				logger.debug("Refund of the client limits of a request denied by a global limit failed "
						+ "(group '{}'): {}", own.group(), Futures.unwrap(ex).toString());
			}
			return null;
		});
	}

	private static RateLimitDecision decision(ScopedLimits scoped, boolean allowed, @Nullable List<LimitStatus> own,
			@Nullable List<LimitStatus> shared) {
		return RateLimitDecision.shared(scoped.all(), allowed, scoped.merge(own, shared));
	}

	/** The client limits' states once what was taken from them (tokens, a reservation, a slot) is given back. */
	private static List<LimitStatus> givenBack(List<LimitStatus> statuses, Cost cost) {
		List<LimitStatus> result = new ArrayList<>(statuses.size());
		for (LimitStatus status : statuses) {
			result.add(status.afterGiveBack(cost.of(status.limit())));
		}
		return result;
	}

	@Override
	public String toString() {
		return "ScopedRateLimiter -> " + this.store;
	}

}
