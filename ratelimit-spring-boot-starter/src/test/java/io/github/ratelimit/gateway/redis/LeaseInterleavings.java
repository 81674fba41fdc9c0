package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.function.LongConsumer;

import io.github.ratelimit.gateway.redis.ScriptAtTime.Leased;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Limit;
import io.github.ratelimit.gateway.redis.ScriptAtTime.Result;

import static io.github.ratelimit.gateway.redis.ScriptAtTime.NO_LEASE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several instances deciding one client's requests against the shipped script at simulated Redis times, the way
 * {@code LeasingRateLimiter} does: a request is spent from the instance's lease while it has tokens and has not ended
 * locally (a lease duration after its call was sent), else it asks Redis for its cost plus a lease, sending the
 * previous lease back; an instance may drop its lease (idle, evicted) and send its unspent tokens back on their own.
 * Calls may arrive late (up to one and a half lease durations after they were sent), so a return can reach Redis
 * after its lease ended; meanwhile other instances drain the bucket (take everything Redis admits).
 *
 * <p>Checks the two rules of leases: at every step, the tokens left in Redis plus the unspent tokens of leases that
 * can still be spent or given back are at most the capacity; and in every interval [t1, t2], what was admitted (every
 * request Redis allowed, every token spent from a lease) is at most capacity + refill rate x (t2 - t1), per limit.
 */
final class LeaseInterleavings {

	private final ScriptAtTime script;

	private final String key;

	private final Limit[] limits;

	private final Random random;

	private final Instance[] instances;

	private final PriorityQueue<Call> calls = new PriorityQueue<>();

	private final List<Lease> leases = new ArrayList<>();

	private final List<long[]> admissions = new ArrayList<>();

	private long now;

	private long start;

	private long sequence;

	private int lateReturns;

	private int current;

	/** The longest times between two steps (microseconds): about 50, 5 or 1 requests per second. */
	private static final int[] GAPS = { 40_000, 400_000, 2_000_000 };

	private int gap = GAPS[0];

	LeaseInterleavings(ScriptAtTime script, String key, long seed, int instanceCount, Limit... limits) {
		this.script = script;
		this.key = key;
		this.limits = limits;
		this.random = new Random(seed);
		this.instances = new Instance[instanceCount];
		for (int i = 0; i < instanceCount; i++) {
			// lease durations from 0.2 s to 2 s, one per instance (its ratelimit.leases.duration)
			this.instances[i] = new Instance(200_000 + this.random.nextInt(1_800_000));
		}
	}

	/**
	 * Run steps from a time: requests about every 20 ms, 200 ms or 1 s, on one instance for a while and then on another, now and then a
	 * drain or a dropped lease.
	 * @param steps how many steps
	 * @param startMicros Redis time of the first step
	 * @param budget most tokens an instance asks for in one lease
	 */
	void run(int steps, long startMicros, int budget) {
		this.now = startMicros;
		this.start = startMicros;
		for (int n = 0; n < steps; n++) {
			this.now += this.random.nextInt(this.gap);
			deliver(this.now);
			if (this.random.nextInt(100) < 5) {
				// the client's requests move to another instance (a load balancer's choice), at another rate; the one
				// before keeps its lease unspent until it sends it back
				this.current = this.random.nextInt(this.instances.length);
				this.gap = GAPS[this.random.nextInt(GAPS.length)];
			}
			int roll = this.random.nextInt(100);
			if (roll < 3) {
				drain();
			}
			else if (roll < 10) {
				drop(this.instances[this.random.nextInt(this.instances.length)]);
			}
			else {
				request(this.instances[this.current], budget);
			}
			checkTokensOut();
		}
		deliver(Long.MAX_VALUE);
	}

	/** Returns of unspent tokens (on their own or with a lease call) that reached Redis after their lease ended. */
	int lateReturns() {
		return this.lateReturns;
	}

	/** Requests admitted (by Redis or from a lease). */
	int admitted() {
		return this.admissions.size();
	}

	/** Checks every interval between two admissions against capacity + refill over it, per limit. */
	void checkIntervals() {
		for (Limit limit : this.limits) {
			double rate = (double) limit.refillTokens() / limit.periodMicros();
			double worst = Double.NEGATIVE_INFINITY;
			int from = 0;
			int to = 0;
			for (int a = 0; a < this.admissions.size(); a++) {
				long tokens = 0;
				for (int b = a; b < this.admissions.size(); b++) {
					tokens += this.admissions.get(b)[1];
					double excess = tokens
							- (limit.capacity() + rate * (this.admissions.get(b)[0] - this.admissions.get(a)[0]));
					if (excess > worst) {
						worst = excess;
						from = a;
						to = b;
					}
				}
			}
			long t1 = this.admissions.get(from)[0] - this.start;
			long t2 = this.admissions.get(to)[0] - this.start;
			assertThat(worst)
				.as("limit %s: admitted between %d us and %d us after the start: %.0f tokens, bound %.2f", limit, t1, t2,
						worst + limit.capacity() + rate * (t2 - t1), limit.capacity() + rate * (t2 - t1))
				.isLessThanOrEqualTo(1e-6);
		}
	}

	private void request(Instance instance, int budget) {
		Lease lease = instance.lease;
		if (lease != null && lease.left >= 1 && this.now < lease.localEnd) {
			lease.left--;
			admit(this.now);
			return;
		}
		if (instance.calling) {
			// a lease call is out: an exact check
			if (this.script.check(this.now, 1, this.key, this.limits).allowed()) {
				admit(this.now);
			}
			return;
		}
		long[] previous = end(instance);
		long wanted = 1 + this.random.nextInt(budget);
		long sent = this.now;
		instance.calling = true;
		send(instance, previous, (at) -> {
			Leased leased = this.script.lease(at, 1, wanted, instance.durationMicros, previous, this.key, this.limits);
			returned(previous, at);
			instance.calling = false;
			if (leased.check().allowed()) {
				admit(at);
			}
			if (leased.tokens() > 0) {
				Lease taken = new Lease(leased.tokens(), leased.endMicros(), sent + instance.durationMicros);
				this.leases.add(taken);
				instance.lease = taken;
			}
		});
	}

	/** The instance drops its lease (idle or evicted): the unspent tokens go back on their own, if any. */
	private void drop(Instance instance) {
		if (instance.calling || instance.lease == null) {
			return;
		}
		long[] previous = end(instance);
		if (previous[1] == 0) {
			return;
		}
		send(instance, previous, (at) -> {
			this.script.lease(at, 0, 0, instance.durationMicros, previous, this.key, this.limits);
			returned(previous, at);
		});
	}

	/** An instance takes everything Redis admits, one request after the other. */
	private void drain() {
		drain(this.now);
	}

	private void drain(long at) {
		for (int i = 0; i < 1_000 && this.script.check(at, 1, this.key, this.limits).allowed(); i++) {
			admit(at);
		}
	}

	/** Ends the instance's lease: what it sends back (granted, unspent, end), or no lease. */
	private long[] end(Instance instance) {
		Lease lease = instance.lease;
		instance.lease = null;
		if (lease == null) {
			return NO_LEASE;
		}
		lease.sent = true;
		return new long[] { lease.granted, lease.left, lease.end };
	}

	private void returned(long[] previous, long at) {
		if (previous == NO_LEASE) {
			return;
		}
		for (Lease lease : this.leases) {
			if (lease.sent && !lease.back && lease.end == previous[2] && lease.granted == previous[0]) {
				lease.back = true;
				break;
			}
		}
		if (at >= previous[2] && previous[1] > 0) {
			this.lateReturns++;
		}
	}

	/** A call reaches Redis at once, or (40%) up to one and a half lease durations later. */
	private void send(Instance instance, long[] previous, LongConsumer action) {
		long delay = (this.random.nextInt(100) < 40) ? this.random.nextInt((int) (instance.durationMicros * 3 / 2))
				: this.random.nextInt(2_000);
		this.calls.add(new Call(this.now + delay, this.sequence++, previous, action));
	}

	private void deliver(long until) {
		while (!this.calls.isEmpty() && this.calls.peek().arrival() <= until) {
			Call call = this.calls.poll();
			boolean late = call.previous()[1] > 0 && call.arrival() >= call.previous()[2];
			if (late && this.random.nextBoolean()) {
				// the worst moment for a late return: another instance has just taken everything, and takes what
				// comes back at once
				drain(call.arrival());
				call.action().accept(call.arrival());
				drain(call.arrival());
			}
			else {
				call.action().accept(call.arrival());
			}
		}
	}

	/** Tokens in Redis plus the unspent tokens that can still be spent or come back: at most the capacity. */
	private void checkTokensOut() {
		long out = 0;
		for (Lease lease : this.leases) {
			if (!lease.back && this.now < lease.end) {
				out += lease.left;
			}
		}
		Result read = this.script.check(this.now, 0, this.key, this.limits);
		for (int i = 0; i < this.limits.length; i++) {
			assertThat(read.remaining(i) + out)
				.as("limit %s at %d us after the start: %d tokens in Redis, %d unspent in leases", this.limits[i], this.now - this.start,
						read.remaining(i), out)
				.isLessThanOrEqualTo(this.limits[i].capacity());
		}
	}

	private void admit(long at) {
		this.admissions.add(new long[] { at, 1 });
	}

	private static final class Instance {

		final long durationMicros;

		Lease lease;

		boolean calling;

		Instance(long durationMicros) {
			this.durationMicros = durationMicros;
		}

	}

	private static final class Lease {

		final long granted;

		final long end;

		final long localEnd;

		long left;

		/** Whether it was sent back (it is no longer spent). */
		boolean sent;

		/** Whether its return reached Redis. */
		boolean back;

		Lease(long granted, long end, long localEnd) {
			this.granted = granted;
			this.left = granted;
			this.end = end;
			this.localEnd = localEnd;
		}

	}

	private record Call(long arrival, long sequence, long[] previous, LongConsumer action) implements Comparable<Call> {

		@Override
		public int compareTo(Call other) {
			int byArrival = Long.compare(this.arrival, other.arrival);
			return (byArrival != 0) ? byArrival : Long.compare(this.sequence, other.sequence);
		}

	}

}
