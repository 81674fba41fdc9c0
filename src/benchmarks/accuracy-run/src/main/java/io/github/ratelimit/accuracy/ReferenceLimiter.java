package io.github.ratelimit.accuracy;

import java.util.ArrayDeque;

/**
 * A single-threaded, in-memory model of each algorithm, fed the run's checks in the order and at the Redis times
 * the script saw them: what one exact limiter would have admitted for exactly these arrivals. The distributed run
 * (N instances, N clients, one Redis) should admit the same number; any difference would be lost updates or double
 * admissions between instances. Client-side stalls change the arrivals, and so both counts, but not their agreement.
 */
final class ReferenceLimiter {

	private ReferenceLimiter() {
	}

	/**
	 * Replay.
	 * @param plan the plan
	 * @param times Redis times of every answered check (cost 1), ascending, µs
	 * @return how many an exact limiter admits
	 */
	static int admitted(Plan plan, long[] times) {
		long c = plan.capacity();
		long w = plan.windowMicros();
		int admitted = 0;
		switch (plan.algorithm()) {
			case TOKEN_BUCKET -> {
				double tokens = c;
				long last = (times.length > 0) ? times[0] : 0;
				for (long t : times) {
					tokens = Math.min(c, tokens + (t - last) * (double) c / w);
					last = t;
					if (tokens + 1e-9 >= 1) {
						tokens -= 1;
						admitted++;
					}
				}
			}
			case SLIDING_WINDOW_LOG -> {
				ArrayDeque<Long> log = new ArrayDeque<>();
				for (long t : times) {
					while (!log.isEmpty() && log.peekFirst() <= t - w) {
						log.pollFirst();
					}
					if (log.size() + 1 <= c) {
						log.addLast(t);
						admitted++;
					}
				}
			}
			case FIXED_WINDOW -> {
				long start = Long.MIN_VALUE;
				long used = 0;
				for (long t : times) {
					long s = t - Math.floorMod(t, w);
					if (s != start) {
						start = s;
						used = 0;
					}
					if (used + 1 <= c) {
						used++;
						admitted++;
					}
				}
			}
			case SLIDING_WINDOW_COUNTER -> {
				long start = Long.MIN_VALUE;
				long current = 0;
				long previous = 0;
				for (long t : times) {
					long s = t - Math.floorMod(t, w);
					if (s != start) {
						previous = (s - w == start) ? current : 0;
						current = 0;
						start = s;
					}
					double weighted = Math.floor(previous * (double) (w - (t - s)) / w + 0.5);
					if (weighted <= c - current - 1) {
						current++;
						admitted++;
					}
				}
			}
		}
		return admitted;
	}

}
