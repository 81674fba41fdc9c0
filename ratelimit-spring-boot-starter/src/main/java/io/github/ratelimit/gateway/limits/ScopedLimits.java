package io.github.ratelimit.gateway.limits;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The limits of a (plan, endpoint group) split by {@link LimitScope scope}: the client's own limits and the limits
 * shared by every client of the group, each as a {@link PlanLimits} of its own (same plan and group, limits in
 * configuration order), with their positions in the original list so that per-limit results can be put back in
 * that order. Immutable; held by the limits it splits ({@link PlanLimits#scoped()}).
 */
public final class ScopedLimits {

	private final PlanLimits all;

	private final @Nullable PlanLimits client;

	private final PlanLimits global;

	private final int[] clientPositions;

	private final int[] globalPositions;

	private ScopedLimits(PlanLimits all, @Nullable PlanLimits client, PlanLimits global, int[] clientPositions,
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
	static ScopedLimits of(PlanLimits limits) {
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
	public @Nullable PlanLimits client() {
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
	 * Put per-limit results of the two parts back into the order of {@link #all()}.
	 * @param clientResults results of {@link #client()}'s limits in their order, or {@code null} if unknown (or there
	 * are no client limits)
	 * @param globalResults results of {@link #global()}'s limits in their order, or {@code null} if unknown
	 * @param <T> the per-limit result (a limit's status)
	 * @return the known results in configuration order (a part given as {@code null} is left out)
	 */
	@SuppressWarnings("unchecked")
	public <T> List<T> merge(@Nullable List<T> clientResults, @Nullable List<T> globalResults) {
		Object[] ordered = new Object[this.all.limits().size()];
		place(ordered, this.clientPositions, clientResults);
		place(ordered, this.globalPositions, globalResults);
		List<T> result = new ArrayList<>(ordered.length);
		for (Object status : ordered) {
			if (status != null) {
				result.add((T) status);
			}
		}
		return result;
	}

	private static void place(Object[] ordered, int[] positions, @Nullable List<?> results) {
		if (results == null) {
			return;
		}
		for (int i = 0; i < positions.length && i < results.size(); i++) {
			ordered[positions[i]] = results.get(i);
		}
	}

}
