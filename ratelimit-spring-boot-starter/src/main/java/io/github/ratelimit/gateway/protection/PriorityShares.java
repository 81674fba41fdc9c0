package io.github.ratelimit.gateway.protection;

import java.util.EnumMap;
import java.util.Map;

/**
 * The guaranteed shares of an upstream protection's limit, one for each priority below {@link Priority#CRITICAL}
 * (which takes none: it is refused only when critical requests alone fill the limit). A priority is guaranteed
 * {@code floor(share * limit)} requests in flight against the priorities that are not critical; what a priority
 * does not use may be borrowed by any other.
 */
public final class PriorityShares {

	/** The shares used when none are configured: high 50 %, normal 30 %, low 20 %. */
	public static final PriorityShares DEFAULT = new PriorityShares(Map.of(Priority.HIGH, 0.5, Priority.NORMAL, 0.3,
			Priority.LOW, 0.2));

	private final double[] shares = new double[Priority.values().length];

	/**
	 * Create the shares.
	 * @param shares the share of each priority below critical, each from 0 to 1; a priority not given has 0
	 * @throws IllegalArgumentException if {@link Priority#CRITICAL} has a share, a share is outside 0..1 or not a
	 * number, or the shares add up to more than 1
	 */
	public PriorityShares(Map<Priority, Double> shares) {
		double total = 0;
		for (Map.Entry<Priority, Double> share : new EnumMap<>(shares).entrySet()) {
			double value = share.getValue();
			if (share.getKey() == Priority.CRITICAL) {
				throw new IllegalArgumentException("critical takes no share: it is refused only when critical "
						+ "requests alone fill the limit");
			}
			if (!(value >= 0 && value <= 1)) {
				throw new IllegalArgumentException("the share of " + share.getKey().tag() + " must be from 0 to 1, was "
						+ value);
			}
			this.shares[share.getKey().ordinal()] = value;
			total += value;
		}
		if (total > 1 + 1e-9) {
			throw new IllegalArgumentException("the shares add up to " + total + ", more than 1");
		}
	}

	/**
	 * The share of a priority.
	 * @param priority a priority
	 * @return from 0 to 1; 0 for {@link Priority#CRITICAL}
	 */
	public double share(Priority priority) {
		return this.shares[priority.ordinal()];
	}

	/**
	 * The requests in flight a priority is guaranteed under a limit.
	 * @param priority a priority
	 * @param limit the limit, at least 0
	 * @return {@code floor(share * limit)}; 0 for {@link Priority#CRITICAL}
	 */
	public int guaranteed(Priority priority, int limit) {
		return (int) Math.floor(this.shares[priority.ordinal()] * limit + 1e-9);
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder("PriorityShares[");
		for (Priority priority : Priority.values()) {
			if (priority != Priority.CRITICAL) {
				text.append(priority.tag()).append('=').append(Math.round(share(priority) * 1000) / 10.0).append("% ");
			}
		}
		return text.toString().strip() + "]";
	}

}
