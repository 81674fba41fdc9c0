package io.github.ratelimit.gateway.protection;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import org.jspecify.annotations.Nullable;

/**
 * The concurrency limit of one protected upstream in this gateway instance, shared out by priority. The limit is
 * fixed, or adaptive: found from the latency of the upstream's answers by an {@link AdaptiveAlgorithm}, kept from
 * {@code min} to {@code max}.
 *
 * <p>Admission ({@link #tryAcquire}) ranks the requests in flight, highest first: every {@link Priority#CRITICAL}
 * request; then the requests of the other priorities within their guaranteed shares ({@link PriorityShares}); then
 * what each priority borrowed beyond its share, by priority ({@code high}, {@code normal}, {@code low}). A request is
 * admitted when fewer requests than the limit rank at or above it. So nothing is refused while fewer than the limit
 * are in flight; at the limit the lowest priority beyond its share is refused first; a request within its share is
 * refused only when critical requests and the requests within their shares fill the limit; a critical one only when
 * critical requests alone fill it. A request that outranks borrowed places is admitted without waiting for them to
 * end: requests in flight then exceed the limit until the outranked answers are over. Each rank admits while fewer
 * than the limit are at or above it, so in the worst order of arrivals (each rank arriving once the ranks below
 * fill the limit) requests in flight reach at most 4 × the limit; 3.3 × with {@link PriorityShares#DEFAULT}.
 *
 * <p>Thread-safe. Admission and release take a short lock; samples go to the algorithm's own lock.
 */
public final class UpstreamProtection {

	private final String name;

	private final Limit limit;

	private final @Nullable AdaptiveAlgorithm algorithm;

	private final int minLimit;

	private final int maxLimit;

	private final PriorityShares shares;

	private final boolean shadow;

	private final long retryAfterSeconds;

	private final LongSupplier nanoClock;

	private final int[] inFlight = new int[Priority.values().length];

	private final List<SampleListener> listeners = new CopyOnWriteArrayList<>();

	/**
	 * Create a protection.
	 * @param name its name ({@code ratelimit.protections.<name>})
	 * @param limit the limit algorithm (a {@link FixedLimit} for a fixed limit)
	 * @param minLimit the least limit, at least 1
	 * @param maxLimit the largest limit, at least {@code minLimit}
	 * @param shares the guaranteed share of each priority below critical
	 * @param shadow whether requests that would be shed are forwarded all the same (and only counted)
	 * @param retryAfterSeconds the {@code Retry-After} of a shed request, at least 1
	 * @param nanoClock a monotonic clock in nanoseconds ({@code System::nanoTime})
	 * @throws IllegalArgumentException if a bound or {@code retryAfterSeconds} is out of range
	 */
	public UpstreamProtection(String name, Limit limit, int minLimit, int maxLimit, PriorityShares shares,
			boolean shadow, long retryAfterSeconds, LongSupplier nanoClock) {
		this(name, limit, null, minLimit, maxLimit, shares, shadow, retryAfterSeconds, nanoClock);
	}

	private UpstreamProtection(String name, Limit limit, @Nullable AdaptiveAlgorithm algorithm, int minLimit,
			int maxLimit, PriorityShares shares, boolean shadow, long retryAfterSeconds, LongSupplier nanoClock) {
		if (minLimit < 1 || maxLimit < minLimit) {
			throw new IllegalArgumentException("need 1 <= min <= max, was min " + minLimit + ", max " + maxLimit);
		}
		if (retryAfterSeconds < 1) {
			throw new IllegalArgumentException("retryAfterSeconds must be at least 1, was " + retryAfterSeconds);
		}
		this.name = name;
		this.limit = limit;
		this.algorithm = algorithm;
		this.minLimit = minLimit;
		this.maxLimit = maxLimit;
		this.shares = shares;
		this.shadow = shadow;
		this.retryAfterSeconds = retryAfterSeconds;
		this.nanoClock = nanoClock;
	}

	/**
	 * A protection with a fixed limit.
	 * @param name its name
	 * @param maxInFlight the limit, at least 1
	 * @param shares the guaranteed share of each priority below critical
	 * @param shadow whether requests that would be shed are forwarded all the same
	 * @param retryAfterSeconds the {@code Retry-After} of a shed request, at least 1
	 * @return the protection
	 */
	public static UpstreamProtection fixed(String name, int maxInFlight, PriorityShares shares, boolean shadow,
			long retryAfterSeconds) {
		return new UpstreamProtection(name, FixedLimit.of(maxInFlight), maxInFlight, maxInFlight, shares, shadow,
				retryAfterSeconds, System::nanoTime);
	}

	/**
	 * A protection with an adaptive limit.
	 * @param name its name
	 * @param algorithm how the limit follows latency
	 * @param min the least limit, at least 1
	 * @param max the largest limit, at least {@code min}
	 * @param initial the limit before any sample, from {@code min} to {@code max}
	 * @param shares the guaranteed share of each priority below critical
	 * @param shadow whether requests that would be shed are forwarded all the same
	 * @param retryAfterSeconds the {@code Retry-After} of a shed request, at least 1
	 * @return the protection
	 */
	public static UpstreamProtection adaptive(String name, AdaptiveAlgorithm algorithm, int min, int max, int initial,
			PriorityShares shares, boolean shadow, long retryAfterSeconds) {
		return new UpstreamProtection(name, algorithm.newLimit(min, max, initial), algorithm, min, max, shares,
				shadow, retryAfterSeconds, System::nanoTime);
	}

	/**
	 * Take a place for a request of a priority, if it is admitted (see the class comment).
	 * @param priority the request's priority
	 * @return the permit, to be released once the exchange is over; {@code null} when the request is to be shed
	 */
	public @Nullable UpstreamPermit tryAcquire(Priority priority) {
		int current = limit();
		synchronized (this.inFlight) {
			if (!admits(priority, current)) {
				return null;
			}
			return take(priority);
		}
	}

	/**
	 * Take a place for a request whatever the limit: a request that would be shed, forwarded in shadow mode.
	 * @param priority the request's priority
	 * @return the permit, to be released once the exchange is over
	 */
	public UpstreamPermit acquire(Priority priority) {
		synchronized (this.inFlight) {
			return take(priority);
		}
	}

	private boolean admits(Priority priority, int limit) {
		int critical = this.inFlight[Priority.CRITICAL.ordinal()];
		if (priority == Priority.CRITICAL) {
			return critical < limit;
		}
		int withinShares = 0;
		int borrowedAtOrAbove = 0;
		for (Priority other : Priority.values()) {
			if (other == Priority.CRITICAL) {
				continue;
			}
			int guaranteed = this.shares.guaranteed(other, limit);
			int used = this.inFlight[other.ordinal()];
			withinShares += Math.min(used, guaranteed);
			if (other.compareTo(priority) <= 0) {
				borrowedAtOrAbove += Math.max(0, used - guaranteed);
			}
		}
		boolean withinOwnShare = this.inFlight[priority.ordinal()] < this.shares.guaranteed(priority, limit);
		int ranked = critical + withinShares + (withinOwnShare ? 0 : borrowedAtOrAbove);
		return ranked < limit;
	}

	private UpstreamPermit take(Priority priority) {
		int total = 0;
		for (int count : this.inFlight) {
			total += count;
		}
		this.inFlight[priority.ordinal()]++;
		return new Permit(priority, total + 1);
	}

	private void leave(Priority priority) {
		synchronized (this.inFlight) {
			this.inFlight[priority.ordinal()]--;
		}
	}

	/**
	 * The limit now.
	 * @return requests in flight this instance lets through to the upstream, from {@code min} to {@code max}
	 */
	public int limit() {
		return Math.max(this.minLimit, Math.min(this.maxLimit, this.limit.getLimit()));
	}

	/**
	 * Requests of a priority in flight now.
	 * @param priority a priority
	 * @return 0 or more (more than the limit allows after borrowed places were outranked, or in shadow mode)
	 */
	public int inFlight(Priority priority) {
		synchronized (this.inFlight) {
			return this.inFlight[priority.ordinal()];
		}
	}

	/**
	 * Be told of every latency sample.
	 * @param listener the listener; must not throw
	 */
	public void addSampleListener(SampleListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * The protection's name.
	 * @return the name under {@code ratelimit.protections}
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Whether the limit is fixed.
	 * @return {@code true} when {@code min == max}
	 */
	public boolean isFixed() {
		return this.minLimit == this.maxLimit;
	}

	/**
	 * The algorithm of an adaptive limit.
	 * @return the algorithm of a protection made by {@link #adaptive}; {@code null} for a fixed limit, or a limit
	 * given to the constructor
	 */
	public @Nullable AdaptiveAlgorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * The least limit.
	 * @return at least 1
	 */
	public int minLimit() {
		return this.minLimit;
	}

	/**
	 * The largest limit.
	 * @return at least {@link #minLimit()}
	 */
	public int maxLimit() {
		return this.maxLimit;
	}

	/**
	 * The guaranteed shares.
	 * @return the shares
	 */
	public PriorityShares shares() {
		return this.shares;
	}

	/**
	 * Whether requests that would be shed are forwarded all the same, and only counted.
	 * @return {@code true} in shadow mode
	 */
	public boolean isShadow() {
		return this.shadow;
	}

	/**
	 * The {@code Retry-After} of a shed request.
	 * @return seconds, at least 1
	 */
	public long retryAfterSeconds() {
		return this.retryAfterSeconds;
	}

	@Override
	public String toString() {
		return "UpstreamProtection[" + this.name + ", limit " + limit() + (isFixed() ? "" : " of " + this.minLimit
				+ ".." + this.maxLimit) + (this.shadow ? ", shadow" : "") + "]";
	}

	/** A request's place: released once, sampled at most once. */
	private final class Permit implements UpstreamPermit {

		private static final int ADMITTED = 0;

		private static final int SAMPLED = 1;

		private static final int RELEASED = 2;

		private final Priority priority;

		private final int inFlightAtStart;

		private final AtomicInteger state = new AtomicInteger(ADMITTED);

		private volatile long forwardedAt;

		Permit(Priority priority, int inFlightAtStart) {
			this.priority = priority;
			this.inFlightAtStart = inFlightAtStart;
		}

		@Override
		public void forwarded() {
			if (this.forwardedAt == 0) {
				this.forwardedAt = nanoClock.getAsLong();
			}
		}

		@Override
		public void answered(int status) {
			sample(status >= 500);
		}

		@Override
		public void failed() {
			sample(true);
		}

		private void sample(boolean dropped) {
			long start = this.forwardedAt;
			if (start == 0 || !this.state.compareAndSet(ADMITTED, SAMPLED)) {
				return;
			}
			long latency = Math.max(1, nanoClock.getAsLong() - start);
			limit.onSample(start, latency, this.inFlightAtStart, dropped);
			for (SampleListener listener : listeners) {
				listener.sampled(name, this.priority, latency, dropped);
			}
		}

		@Override
		public void release() {
			if (this.state.getAndSet(RELEASED) != RELEASED) {
				leave(this.priority);
			}
		}

		@Override
		public String toString() {
			return "UpstreamPermit[" + name + ", " + this.priority.tag() + "]";
		}

	}

}
