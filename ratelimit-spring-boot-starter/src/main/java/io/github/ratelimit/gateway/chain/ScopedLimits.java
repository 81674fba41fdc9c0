package io.github.ratelimit.gateway.chain;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * The limits of a (plan, endpoint group) split by {@link LimitScope scope}: the client's own limits and the limits
 * shared by every client of the group, each as a {@link PlanLimits} of its own (same plan and group, limits in
 * configuration order), with their positions in the original list so that per-limit results can be put back in
 * that order. Immutable; compute once per {@link PlanLimits} and cache (see {@link #of(PlanLimits)}).
 */
public final class ScopedLimits {

	private final PlanLimits all;

	private final PlanLimits client;

	private final PlanLimits global;

	private final int[] clientPositions;

	private final int[] globalPositions;

	private ScopedLimits(PlanLimits all, PlanLimits client, PlanLimits global, int[] clientPositions,
			int[] globalPositions) {
		this.all = all;
		this.client = client;
		this.global = global;
		this.clientPositions = clientPositions;
		this.globalPositions = globalPositions;
	}

	/**
	 * Split limits by scope.
	 * @param limits the limits of a plan in a group, with at least one {@link LimitScope#GLOBAL global} limit
	 * @return the split
	 * @throws IllegalArgumentException if no limit is global
	 */
	public static ScopedLimits of(PlanLimits limits) {
		List<LimitDefinition> own = new ArrayList<>();
		List<LimitDefinition> shared = new ArrayList<>();
		int[] ownAt = new int[limits.limits().size()];
		int[] sharedAt = new int[limits.limits().size()];
		for (int i = 0; i < limits.limits().size(); i++) {
			LimitDefinition limit = limits.limits().get(i);
			if (limit.isGlobal()) {
				sharedAt[shared.size()] = i;
				shared.add(limit);
			}
			else {
				ownAt[own.size()] = i;
				own.add(limit);
			}
		}
		if (shared.isEmpty()) {
			throw new IllegalArgumentException("No global limit for plan '" + limits.plan() + "' in group '"
					+ limits.group() + "'");
		}
		return new ScopedLimits(limits, own.isEmpty() ? null : new PlanLimits(limits.plan(), limits.group(), own),
				new PlanLimits(limits.plan(), limits.group(), shared), Arrays.copyOf(ownAt, own.size()),
				Arrays.copyOf(sharedAt, shared.size()));
	}

	/**
	 * The limits that were split.
	 * @return all limits, in configuration order
	 */
	public PlanLimits all() {
		return this.all;
	}

	/**
	 * The client's own limits ({@link LimitScope#CLIENT}).
	 * @return those limits, or {@code null} when every limit is global
	 */
	public PlanLimits client() {
		return this.client;
	}

	/**
	 * The limits shared by every client of the group ({@link LimitScope#GLOBAL}).
	 * @return those limits, never {@code null}
	 */
	public PlanLimits global() {
		return this.global;
	}

	/**
	 * Put per-limit states of the two parts back into the order of {@link #all()}.
	 * @param clientStatuses states of {@link #client()}'s limits in their order, or {@code null} if unknown (or there
	 * are no client limits)
	 * @param globalStatuses states of {@link #global()}'s limits in their order, or {@code null} if unknown
	 * @return the known states in configuration order (a part given as {@code null} is left out)
	 */
	public List<LimitStatus> merge(List<LimitStatus> clientStatuses, List<LimitStatus> globalStatuses) {
		LimitStatus[] ordered = new LimitStatus[this.all.limits().size()];
		place(ordered, this.clientPositions, clientStatuses);
		place(ordered, this.globalPositions, globalStatuses);
		List<LimitStatus> result = new ArrayList<>(ordered.length);
		for (LimitStatus status : ordered) {
			if (status != null) {
				result.add(status);
			}
		}
		return result;
	}

	private static void place(LimitStatus[] ordered, int[] positions, List<LimitStatus> statuses) {
		if (statuses == null) {
			return;
		}
		for (int i = 0; i < positions.length && i < statuses.size(); i++) {
			ordered[positions[i]] = statuses.get(i);
		}
	}

}
