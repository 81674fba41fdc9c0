package io.github.ratelimit.gateway.protection;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.netflix.concurrency.limits.limit.FixedLimit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class UpstreamProtectionTest {

	private static final PriorityShares SHARES = new PriorityShares(
			Map.of(Priority.HIGH, 0.5, Priority.NORMAL, 0.3, Priority.LOW, 0.2));

	private final AtomicLong clock = new AtomicLong(1);

	private UpstreamProtection fixed(int limit) {
		return new UpstreamProtection("backend", FixedLimit.of(limit), limit, limit, SHARES, false, 1, this.clock::get);
	}

	private static List<UpstreamPermit> take(UpstreamProtection protection, Priority priority, int count) {
		List<UpstreamPermit> permits = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			UpstreamPermit permit = protection.tryAcquire(priority);
			assertThat(permit).as("%s request %d of %d", priority, i + 1, count).isNotNull();
			permits.add(permit);
		}
		return permits;
	}

	@Test
	void aPriorityAloneBorrowsTheWholeLimitAndNoMore() {
		UpstreamProtection protection = fixed(10);
		take(protection, Priority.LOW, 10);
		assertThat(protection.tryAcquire(Priority.LOW)).isNull();
		assertThat(protection.inFlight(Priority.LOW)).isEqualTo(10);
	}

	@Test
	void atTheLimitAHigherPriorityOutranksWhatALowerOneBorrowed() {
		UpstreamProtection protection = fixed(10); // guaranteed: high 5, normal 3, low 2
		take(protection, Priority.LOW, 10);
		take(protection, Priority.NORMAL, 3); // within its share: low's 8 borrowed places rank below
		take(protection, Priority.HIGH, 4);
		assertThat(protection.tryAcquire(Priority.LOW)).isNull();
		// beyond its share, normal outranks low's borrowed places, not the 4 + 3 + 2 within shares
		take(protection, Priority.NORMAL, 1);
		assertThat(protection.tryAcquire(Priority.NORMAL)).isNull(); // 9 within shares + normal's 1 borrowed
		take(protection, Priority.HIGH, 1); // its fifth, within its share: 10 within shares
		assertThat(protection.tryAcquire(Priority.HIGH)).isNull();
	}

	@Test
	void theLowestPriorityBeyondItsShareIsRefusedFirst() {
		UpstreamProtection protection = fixed(10);
		take(protection, Priority.HIGH, 4);
		take(protection, Priority.NORMAL, 3);
		take(protection, Priority.LOW, 3); // one beyond its share of 2
		assertThat(protection.tryAcquire(Priority.LOW)).isNull();
		assertThat(protection.tryAcquire(Priority.NORMAL)).isNotNull(); // low's borrowed place ranks below
		assertThat(protection.tryAcquire(Priority.HIGH)).isNotNull(); // within its share of 5
		assertThat(protection.tryAcquire(Priority.HIGH)).isNull(); // 5 + 3 + 2 + normal's 1 borrowed = 11
	}

	@Test
	void aCriticalRequestIsRefusedOnlyWhenCriticalRequestsAloneFillTheLimit() {
		UpstreamProtection protection = fixed(10);
		take(protection, Priority.HIGH, 5);
		take(protection, Priority.NORMAL, 3);
		take(protection, Priority.LOW, 2);
		take(protection, Priority.CRITICAL, 10);
		assertThat(protection.tryAcquire(Priority.CRITICAL)).isNull();
		assertThat(protection.tryAcquire(Priority.HIGH)).isNull();
	}

	@Test
	void criticalRequestsRankAboveEveryShare() {
		UpstreamProtection protection = fixed(10);
		take(protection, Priority.CRITICAL, 8);
		take(protection, Priority.LOW, 2);
		assertThat(protection.tryAcquire(Priority.HIGH)).isNull();
	}

	@Test
	void releasingGivesThePlaceBackOnce() {
		UpstreamProtection protection = fixed(2);
		List<UpstreamPermit> permits = take(protection, Priority.NORMAL, 2);
		assertThat(protection.tryAcquire(Priority.NORMAL)).isNull();
		permits.get(0).release();
		permits.get(0).release();
		assertThat(protection.inFlight(Priority.NORMAL)).isEqualTo(1);
		assertThat(protection.tryAcquire(Priority.NORMAL)).isNotNull();
		assertThat(protection.tryAcquire(Priority.NORMAL)).isNull();
	}

	@Test
	void aSampleIsTakenOnceFromForwardingToTheAnswerAndNotAfterRelease() {
		UpstreamProtection protection = fixed(4);
		List<String> samples = new ArrayList<>();
		protection.addSampleListener((name, priority, nanos, dropped) -> samples.add(priority.tag() + " " + nanos
				+ (dropped ? " dropped" : "")));
		UpstreamPermit answered = protection.tryAcquire(Priority.HIGH);
		answered.forwarded();
		this.clock.addAndGet(5_000_000);
		answered.answered(200);
		answered.failed();
		answered.release();
		UpstreamPermit failed = protection.tryAcquire(Priority.LOW);
		failed.forwarded();
		this.clock.addAndGet(7);
		failed.answered(503);
		UpstreamPermit abandoned = protection.tryAcquire(Priority.NORMAL);
		abandoned.forwarded();
		abandoned.release();
		abandoned.answered(200);
		UpstreamPermit neverForwarded = protection.tryAcquire(Priority.NORMAL);
		neverForwarded.answered(200);
		assertThat(samples).containsExactly("high 5000000", "low 7 dropped");
	}

	@Test
	void underContentionRequestsOfOnePriorityNeverExceedTheLimit() throws Exception {
		UpstreamProtection protection = fixed(8);
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger admitted = new AtomicInteger();
		int threads = 8;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		try {
			for (int t = 0; t < threads; t++) {
				pool.execute(() -> {
					try {
						start.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return;
					}
					for (int i = 0; i < 20_000; i++) {
						UpstreamPermit permit = protection.tryAcquire(Priority.NORMAL);
						if (permit != null) {
							admitted.incrementAndGet();
							most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
							inFlight.decrementAndGet();
							permit.release();
						}
					}
				});
			}
			start.countDown();
		}
		finally {
			pool.shutdown();
			assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(admitted.get()).isPositive();
		assertThat(most.get()).isLessThanOrEqualTo(8);
		assertThat(protection.inFlight(Priority.NORMAL)).isZero();
	}


	/**
	 * Every state of the counters reachable by admissions and releases, explored exhaustively: requests in flight
	 * never exceed 4 × the limit, and with the default shares the worst order of arrivals reaches 33 of a limit of 10
	 * (the bound the reference page states).
	 */
	@Test
	void inFlightStaysWithinFourTimesTheLimitInEveryReachableState() {
		assertThat(mostInFlight(10, SHARES)).isEqualTo(33);
		assertThat(mostInFlight(10, new PriorityShares(Map.of(Priority.HIGH, 1.0)))).isEqualTo(40);
		assertThat(mostInFlight(7, new PriorityShares(Map.of(Priority.HIGH, 0.2, Priority.NORMAL, 0.2,
				Priority.LOW, 0.2)))).isLessThanOrEqualTo(28);
		assertThat(mostInFlight(4, SHARES)).isLessThanOrEqualTo(16);
	}

	/** The most requests in flight over every state reachable from none by admissions and releases. */
	private int mostInFlight(int limit, PriorityShares shares) {
		Priority[] priorities = Priority.values();
		Set<List<Integer>> seen = new HashSet<>();
		ArrayDeque<List<Integer>> next = new ArrayDeque<>();
		next.add(List.of(0, 0, 0, 0));
		int most = 0;
		while (!next.isEmpty()) {
			List<Integer> state = next.poll();
			if (!seen.add(state)) {
				continue;
			}
			most = Math.max(most, state.stream().mapToInt(Integer::intValue).sum());
			for (int p = 0; p < priorities.length; p++) {
				UpstreamProtection protection = new UpstreamProtection("backend", FixedLimit.of(limit), limit, limit,
						shares, false, 1, this.clock::get);
				for (int q = 0; q < priorities.length; q++) {
					for (int i = 0; i < state.get(q); i++) {
						protection.acquire(priorities[q]);
					}
				}
				if (protection.tryAcquire(priorities[p]) != null) {
					List<Integer> admitted = new ArrayList<>(state);
					admitted.set(p, state.get(p) + 1);
					next.add(List.copyOf(admitted));
				}
				if (state.get(p) > 0) {
					List<Integer> released = new ArrayList<>(state);
					released.set(p, state.get(p) - 1);
					next.add(List.copyOf(released));
				}
			}
		}
		return most;
	}

}
