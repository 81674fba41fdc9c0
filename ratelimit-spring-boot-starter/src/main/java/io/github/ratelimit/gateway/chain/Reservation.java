package io.github.ratelimit.gateway.chain;

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
 */
public interface Reservation {

	/** Nothing reserved: a route whose answers do not change what it is charged, a denial, an unchecked request. */
	Reservation NONE = new Reservation() {

		@Override
		public void settle(long used) {
		}

		@Override
		public void cancel() {
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

	/**
	 * Charge what the answer used: {@code used} units in every limit counting usage (the difference with the
	 * reservation goes back, or is charged on top of it, even beyond what a limit holds), and the request's cost in
	 * every limit counting requests (as taken).
	 * @param used units of usage the answer used, 0 or more
	 */
	void settle(long used);

	/**
	 * Count nothing: give back the request's cost in every limit counting requests and its reservation in every limit
	 * counting usage (an answer that does not count, or a request never forwarded).
	 */
	void cancel();

	/**
	 * The units of usage reserved.
	 * @return units, 0 or more
	 */
	long reserved();

	/**
	 * Two reservations (a client's limits and the group-wide ones), ended together.
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
			public void settle(long used) {
				try {
					first.settle(used);
				}
				finally {
					second.settle(used);
				}
			}

			@Override
			public void cancel() {
				try {
					first.cancel();
				}
				finally {
					second.cancel();
				}
			}

			@Override
			public long reserved() {
				return Math.max(first.reserved(), second.reserved());
			}

		};
	}

}
