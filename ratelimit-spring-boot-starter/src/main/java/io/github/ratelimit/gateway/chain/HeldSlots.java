package io.github.ratelimit.gateway.chain;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The concurrency slots an admitted request holds (one in each of its {@linkplain
 * io.github.ratelimit.gateway.limits.Algorithm#CONCURRENCY concurrency limits}) until its response completes. The
 * front end calls {@link #release()} once the exchange is over, however it ended: response written, upstream error or
 * timeout, client gone, cancellation. A slot never released (its instance died) frees itself after the limit's
 * longest request duration.
 */
@FunctionalInterface
public interface HeldSlots {

	/** No slots: a decision without concurrency limits, a denial, or one that took none. */
	HeldSlots NONE = () -> {
	};

	/**
	 * Give the slots back once the request has completed: the time they were held counts into the limits' average
	 * hold time (the Retry-After estimate). Implementations do it at most once (a second call, or one after
	 * {@link #abandon()}, does nothing) and never throw: a store that cannot be reached is logged, and its slots then
	 * free themselves after the longest request duration.
	 */
	void release();

	/**
	 * Give the slots back without counting their hold time: the request never used them (its check was abandoned,
	 * or undone because a group-wide limit denied it) or was cut short (shutdown). The default releases.
	 */
	default void abandon() {
		release();
	}

	/**
	 * Slots given back by an action run at most once, however often {@link #release()} or {@link #abandon()} is
	 * called (for slots whose hold time is not measured, such as the local fallback's).
	 * @param action gives the slots back; must not throw
	 * @return the slots
	 */
	static HeldSlots once(Runnable action) {
		AtomicBoolean released = new AtomicBoolean();
		return () -> {
			if (released.compareAndSet(false, true)) {
				action.run();
			}
		};
	}

	/**
	 * Slots of two places (a client's limits and the group-wide ones), given back together.
	 * @param first some slots
	 * @param second other slots
	 * @return both; {@code first} or {@code second} alone when the other is {@link #NONE}
	 */
	static HeldSlots both(HeldSlots first, HeldSlots second) {
		if (first == NONE) {
			return second;
		}
		if (second == NONE) {
			return first;
		}
		return new HeldSlots() {
			@Override
			public void release() {
				try {
					first.release();
				}
				finally {
					second.release();
				}
			}

			@Override
			public void abandon() {
				try {
					first.abandon();
				}
				finally {
					second.abandon();
				}
			}
		};
	}

}
