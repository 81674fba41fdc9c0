package io.github.ratelimit.gateway.chain;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The concurrency slots an admitted request holds (one in each of its {@linkplain
 * io.github.ratelimit.gateway.limits.Algorithm#CONCURRENCY concurrency limits}) while the upstream may be working on
 * it. The front end ends them once, when the exchange is over: {@link #release()} when the upstream's response was
 * written in full or the request never reached the upstream (refused or cancelled before routing, a connection to the
 * upstream that could not be opened); {@link #keep()} when the exchange ended after the request was sent upstream but
 * before its response was (client gone, the gateway's response timeout, an upstream read error), since the upstream
 * may still be working on it and the gateway cannot see when it stops. A slot kept, or never ended (its instance
 * died), frees itself after the limit's longest request duration ({@code max-request-duration}).
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
	 * Leave the slots taken: the request reached the upstream and its exchange ended before the upstream's response
	 * was written (client gone, the gateway's timeout, a read error), so the upstream may still be working on it.
	 * Each slot frees itself after its limit's longest request duration, counted from when it was taken; until
	 * then it counts against the client. Ends the slots like {@link #release()} does: a later {@link #release()}
	 * or {@link #abandon()} does nothing. Never throws. The default does nothing (the slots free themselves).
	 */
	default void keep() {
	}

	/**
	 * Slots given back by an action run at most once, however often {@link #release()} or {@link #abandon()} is
	 * called (for slots whose hold time is not measured, such as the local fallback's); after {@link #keep()} it
	 * never runs.
	 * @param action gives the slots back; must not throw
	 * @return the slots
	 */
	static HeldSlots once(Runnable action) {
		AtomicBoolean ended = new AtomicBoolean();
		return new HeldSlots() {
			@Override
			public void release() {
				if (ended.compareAndSet(false, true)) {
					action.run();
				}
			}

			@Override
			public void keep() {
				ended.set(true);
			}
		};
	}

	/**
	 * These slots, with an action run once after they end, however they end (released, abandoned or kept).
	 * @param slots the slots
	 * @param after runs once after the slots ended; must not throw
	 * @return the slots with the action
	 */
	static HeldSlots andThen(HeldSlots slots, Runnable after) {
		AtomicBoolean ended = new AtomicBoolean();
		return new HeldSlots() {
			@Override
			public void release() {
				end(slots::release);
			}

			@Override
			public void abandon() {
				end(slots::abandon);
			}

			@Override
			public void keep() {
				end(slots::keep);
			}

			private void end(Runnable how) {
				if (ended.compareAndSet(false, true)) {
					try {
						how.run();
					}
					finally {
						after.run();
					}
				}
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

			@Override
			public void keep() {
				try {
					first.keep();
				}
				finally {
					second.keep();
				}
			}
		};
	}

}
