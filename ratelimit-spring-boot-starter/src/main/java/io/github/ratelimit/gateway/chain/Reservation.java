package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What an admitted request took that its answer decides: the units of usage it reserved in its limits counting usage
 * (an estimate, taken before it was forwarded), and, on a route that counts a request only for some answers (say
 * 401 and 403 on a login), the tokens it took in its limits counting requests. The front end ends it once, when the
 * request's answer is over (body complete, stream ended, client gone, upstream error): {@link #settle} with what the
 * answer used, or {@link #cancel} when the answer does not count.
 *
 * <p>Implementations end it at most once (later calls do nothing), make at most one store call for it (none when
 * nothing changes), never retry it, and never throw: a store that cannot be reached leaves the reservation as taken
 * (the request charged its estimate), which is logged and counted.
 *
 * <p>Both ends answer what the limits counting usage were charged in the end, as their state counts it (the store's
 * answer, not the request's figure): what the meters count as charged. It is the usage reported, except where the
 * store could not take all of it (a debt beyond what it carries, the store unreachable: the reservation stays), or
 * where a limit given units back had refilled meanwhile (it takes back only what it lacked).
 */
public interface Reservation {

	/** Nothing reserved: a route whose answers do not change what it is charged, a denial, an unchecked request. */
	Reservation NONE = new Reservation() {

		@Override
		public CompletionStage<Long> settle(long used) {
			return NOTHING;
		}

		@Override
		public CompletionStage<Long> cancel() {
			return NOTHING;
		}

		@Override
		public long reserved() {
			return 0;
		}

		@Override
		public String toString() {
			return "Reservation.NONE";
		}

	};

	/** Completed with 0: nothing charged. */
	CompletionStage<Long> NOTHING = CompletableFuture.completedFuture(0L);

	/**
	 * Charge what the answer used: {@code used} units in every limit counting usage (the difference with the
	 * reservation goes back, or is charged on top of it, even beyond what a limit holds: a token bucket owes all of
	 * it), and the request's cost in every limit counting requests (as taken).
	 * @param used units of usage the answer used, 0 or more
	 * @return completes (never exceptionally) with the units of usage the request was charged in the end, as the
	 * limits counting usage count it (the least any of them took); its reservation when the store could not be
	 * reached; 0 when none of its limits counts usage, or when it was ended before
	 */
	CompletionStage<Long> settle(long used);

	/**
	 * Count nothing: give back the request's cost in every limit counting requests and its reservation in every limit
	 * counting usage (an answer that does not count, or a request never forwarded).
	 * @return completes (never exceptionally) with the units of usage still charged: 0, or what a limit counting usage
	 * could not take back (it had refilled meanwhile; the store unreachable: the reservation)
	 */
	CompletionStage<Long> cancel();

	/**
	 * The units of usage reserved.
	 * @return units, 0 or more
	 */
	long reserved();

	/**
	 * Two reservations (a client's limits and the group-wide ones), ended together; each end answers the larger of
	 * the two charges (one of them holds no limit counting usage when only the other counts usage).
	 * @param first a reservation
	 * @param second another
	 * @return both; {@code first} or {@code second} alone when the other is {@link #NONE}
	 */
	static Reservation both(Reservation first, Reservation second) {
		if (first == NONE) {
			return second;
		}
		if (second == NONE) {
			return first;
		}
		return new Reservation() {

			@Override
			public CompletionStage<Long> settle(long used) {
				CompletionStage<Long> one = NOTHING;
				try {
					one = first.settle(used);
				}
				finally {
					one = larger(one, second.settle(used));
				}
				return one;
			}

			@Override
			public CompletionStage<Long> cancel() {
				CompletionStage<Long> one = NOTHING;
				try {
					one = first.cancel();
				}
				finally {
					one = larger(one, second.cancel());
				}
				return one;
			}

			private static CompletionStage<Long> larger(CompletionStage<Long> one, CompletionStage<Long> other) {
				return one.thenCombine(other, Math::max);
			}

			@Override
			public long reserved() {
				return Math.max(first.reserved(), second.reserved());
			}

		};
	}

}
