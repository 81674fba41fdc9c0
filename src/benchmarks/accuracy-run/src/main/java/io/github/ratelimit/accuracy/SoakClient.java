package io.github.ratelimit.accuracy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One client of the soak: its own IP address (so its own bucket), the time of its first request and when it stops,
 * and every answer it got.
 */
final class SoakClient {

	private final int id;

	private final String address;

	private final long firstDueMicros;

	private final long stopMicros;

	private final boolean lastsToTheEnd;

	private final List<Response> responses = new ArrayList<>();

	/**
	 * A client.
	 * @param id its number, from 0 in order of start
	 * @param address its IP address
	 * @param firstDueMicros when its first request is due (wall clock, µs)
	 * @param stopMicros when it stops (no request is due at or after it)
	 * @param lastsToTheEnd whether it is stopped by the end of the run rather than by its lifetime
	 */
	SoakClient(int id, String address, long firstDueMicros, long stopMicros, boolean lastsToTheEnd) {
		this.id = id;
		this.address = address;
		this.firstDueMicros = firstDueMicros;
		this.stopMicros = stopMicros;
		this.lastsToTheEnd = lastsToTheEnd;
	}

	int id() {
		return this.id;
	}

	String address() {
		return this.address;
	}

	long firstDueMicros() {
		return this.firstDueMicros;
	}

	long stopMicros() {
		return this.stopMicros;
	}

	boolean lastsToTheEnd() {
		return this.lastsToTheEnd;
	}

	synchronized void record(Response response) {
		this.responses.add(response);
	}

	/**
	 * Its answers so far.
	 * @return a copy, in order of sending
	 */
	synchronized List<Response> responses() {
		List<Response> copy = new ArrayList<>(this.responses);
		copy.sort(Comparator.comparingLong(Response::sentMicros));
		return copy;
	}

	/**
	 * One request and its answer.
	 * @param sentMicros when it was sent (wall clock, µs)
	 * @param answeredMicros when the answer (or the error) came
	 * @param status the HTTP status, or {@link SoakLoad#NO_ANSWER}
	 * @param instance the gateway instance it went to (0-based)
	 * @param shared whether the answer carried the {@code RateLimit} field, i.e. was decided by the shared limiter (or
	 * the over-limit cache or a lease, which hold what it decided), not by the local fallback
	 */
	record Response(long sentMicros, long answeredMicros, int status, int instance, boolean shared) {
	}

}
