package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.StoredTokens;
import com.github.benmanes.caffeine.cache.Scheduler;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Token leases against a real Redis: several {@link LeasingRateLimiter} instances (as several gateway instances) over
 * one Redis store, concurrently. They never admit more than the limit, ask Redis far less often than they decide,
 * answer denials with the store's exact Retry-After, give their unspent tokens back when they stop, and leave limits
 * without a lease budget exact.
 */
class LeasingRateLimiterTest {

	private static final TestRedis testRedis = TestRedis.shared();

	@RegisterExtension
	static final RedisStoreOnTestRedis redis = new RedisStoreOnTestRedis();

	private static RedisRateLimitStore store;

	private final ClientKey alice = new ClientKey(ClientKey.Kind.API_KEY, "alice", "pro");

	/** 1,000 per second, capacity 2,000, leases of up to 5% (100 tokens). */
	private final PlanLimits leased = new PlanLimits("pro", "search", List.of(
			new LimitDefinition("pro-search", 2_000, 1_000, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET,
					LimitScope.CLIENT, new LeaseBudget(5))));

	@BeforeAll
	static void connect() {
		store = redis.store();
	}

	@Test
	void severalInstancesOverloadingOneClientNeverAdmitMoreThanTheLimit() throws Exception {
		Result result = runInstances(this.leased, 3, 2_500);
		assertThat(result.decisions()).isEqualTo(7_500);
		assertThat((double) result.allowed()).as("admitted in %.2f s", result.seconds())
			.isLessThanOrEqualTo(2_000 + 1_000 * result.seconds());
		assertThat(result.allowed()).as("the bucket's capacity was used").isGreaterThanOrEqualTo(2_000);
	}

	@Test
	void severalInstancesAskRedisFarLessOftenThanTheyDecideForAClientUnderItsLimit() throws Exception {
		PlanLimits large = new PlanLimits("pro", "bulk", List.of(new LimitDefinition("pro-bulk", 1_000_000, 1_000_000,
				Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET, LimitScope.CLIENT, new LeaseBudget(2))));
		Result result = runInstances(large, 3, 2_500);
		assertThat(result.allowed()).isEqualTo(7_500);
		assertThat(result.calls()).as("Redis calls for %d decisions", result.decisions())
			.isLessThan(result.decisions() / 5);
	}

	/** Instances deciding for one client at once, each one request after the other; counts what Redis was asked. */
	private Result runInstances(PlanLimits limits, int count, int requestsEach) throws InterruptedException {
		CountingStore counting = new CountingStore(store);
		List<LeasingRateLimiter> instances = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			instances.add(new LeasingRateLimiter(counting, Duration.ofSeconds(1), 1000));
		}
		AtomicLong allowed = new AtomicLong();
		AtomicLong decisions = new AtomicLong();
		long start = System.nanoTime();
		List<Thread> threads = new ArrayList<>();
		for (LeasingRateLimiter instance : instances) {
			Thread thread = new Thread(() -> {
				for (int i = 0; i < requestsEach; i++) {
					decisions.incrementAndGet();
					if (instance.tryConsume(this.alice, limits, 1).orTimeout(10, TimeUnit.SECONDS).join().allowed()) {
						allowed.incrementAndGet();
					}
				}
			});
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join(60_000);
		}
		double seconds = (System.nanoTime() - start) / 1e9;
		instances.forEach(LeasingRateLimiter::stop);
		return new Result(decisions.get(), allowed.get(), counting.calls.get(), seconds);
	}

	private record Result(long decisions, long allowed, long calls, double seconds) {
	}

	@Test
	void aBusyClientIsDecidedFromItsLeaseWithTheLeasedTokensAsRemaining() {
		LeasingRateLimiter limiter = leasing();
		PlanLimits hourly = hourly();
		RateLimitDecision first = consume(limiter, hourly, 1);
		assertThat(first.source()).isEqualTo(RateLimitDecision.Source.SHARED);
		RateLimitDecision second = consume(limiter, hourly, 1);
		// the second request takes a lease: still the store's answer, with the leased tokens counted as remaining
		assertThat(second.source()).isEqualTo(RateLimitDecision.Source.SHARED);
		assertThat(second.statuses().get(0).remaining()).isEqualTo(1_998);
		RateLimitDecision third = consume(limiter, hourly, 1);
		assertThat(third.source()).isEqualTo(RateLimitDecision.Source.LEASED);
		assertThat(third.allowed()).isTrue();
		assertThat(third.statuses().get(0).remaining()).isEqualTo(1_997);
		limiter.stop();
	}

	@Test
	void aDenialIsTheStoresWithItsExactRetryAfter() {
		PlanLimits small = new PlanLimits("pro", "login", List.of(new LimitDefinition("pro-login", 40, 1,
				Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET, LimitScope.CLIENT, new LeaseBudget(50))));
		LeasingRateLimiter limiter = leasing();
		RateLimitDecision last = null;
		int allowed = 0;
		for (int i = 0; i < 60; i++) {
			last = consume(limiter, small, 1);
			if (last.allowed()) {
				allowed++;
			}
		}
		assertThat(allowed).isEqualTo(40);
		assertThat(last.allowed()).isFalse();
		assertThat(last.source()).isEqualTo(RateLimitDecision.Source.SHARED);
		assertThat(last.retryAfterMillis()).isBetween(59_000L, 60_000L);
		limiter.stop();
	}

	@Test
	void stoppingGivesTheUnspentTokensBack() {
		PlanLimits hourly = hourly();
		LeasingRateLimiter limiter = leasing();
		consume(limiter, hourly, 1);
		RateLimitDecision leasing = consume(limiter, hourly, 1); // takes a lease
		String key = new BucketKeys("rl").keysFor(this.alice, hourly).get(0);
		double whileLeased = StoredTokens.of(testRedis::command, key, 2_000, 1, 3_600_000_000L);
		assertThat(whileLeased).isLessThan(1_997);
		assertThat(leasing.statuses().get(0).remaining()).isEqualTo(1_998);
		limiter.stop();
		// two tokens spent, the rest back
		assertThat(StoredTokens.of(testRedis::command, key, 2_000, 1, 3_600_000_000L)).isBetween(1_998.0, 1_998.01);
		assertThat(limiter.size()).isZero();
	}

	@Test
	void anIdleClientsLeaseGoesBackFromTheThreadThatUsesTheCacheNextWithNoOtherThreadWoken() {
		AtomicLong nanos = new AtomicLong();
		List<Thread> returnedOn = new ArrayList<>();
		CountingStore returns = new CountingStore(store) {

			@Override
			public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
					long durationMicros, ReturnedLease previous) {
				if (wanted == 0 && previous.granted() > 0) {
					returnedOn.add(Thread.currentThread());
				}
				return super.lease(client, limits, cost, wanted, durationMicros, previous);
			}

		};
		LeasingRateLimiter limiter = new LeasingRateLimiter(returns, Duration.ofSeconds(1), 1000, nanos::get,
				Scheduler.disabledScheduler());
		PlanLimits hourly = hourly();
		consume(limiter, hourly, 1);
		assertThat(consume(limiter, hourly, 1).statuses().get(0).remaining()).isEqualTo(1_998); // a lease
		nanos.addAndGet(Duration.ofSeconds(3).toNanos()); // idle for more than two lease durations
		ClientKey bob = new ClientKey(ClientKey.Kind.API_KEY, "bob", "pro");
		limiter.tryConsume(bob, hourly, 1).orTimeout(10, TimeUnit.SECONDS).join();
		assertThat(returnedOn).containsExactly(Thread.currentThread());
		limiter.stop();
	}

	@Test
	void aClientSeenFewerTimesPerLeaseDurationThanTheSmallestLeaseIsDecidedByExactChecks() {
		AtomicLong nanos = new AtomicLong();
		AtomicLong leaseCalls = new AtomicLong();
		CountingStore counting = new CountingStore(store) {

			@Override
			public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
					long durationMicros, ReturnedLease previous) {
				leaseCalls.incrementAndGet();
				return super.lease(client, limits, cost, wanted, durationMicros, previous);
			}

		};
		LeasingRateLimiter limiter = new LeasingRateLimiter(counting, Duration.ofSeconds(1), 1000, nanos::get,
				Scheduler.disabledScheduler());
		PlanLimits hourly = hourly();
		// one request every 0.6 s: about 1.7 per lease duration, fewer than the smallest lease
		for (int i = 0; i < 5; i++) {
			assertThat(consume(limiter, hourly, 1).source()).isEqualTo(RateLimitDecision.Source.SHARED);
			nanos.addAndGet(Duration.ofMillis(600).toNanos());
		}
		assertThat(leaseCalls).hasValue(0);
		assertThat(counting.calls).hasValue(5);
		// one every 0.2 s: five per duration, so the next request takes a lease and the one after spends it
		for (int i = 0; i < 3; i++) {
			consume(limiter, hourly, 1);
			nanos.addAndGet(Duration.ofMillis(200).toNanos());
		}
		assertThat(leaseCalls).hasValue(1);
		assertThat(consume(limiter, hourly, 1).source()).isEqualTo(RateLimitDecision.Source.LEASED);
		limiter.stop();
	}

	@Test
	void limitsWithoutALeaseBudgetAreExactStoreChecks() {
		PlanLimits exact = new PlanLimits("pro", "other",
				List.of(new LimitDefinition("pro-other", 2_000, 1_000, Duration.ofSeconds(1))));
		CountingStore counting = new CountingStore(store);
		LeasingRateLimiter limiter = new LeasingRateLimiter(counting, Duration.ofSeconds(1), 1000);
		for (int i = 0; i < 20; i++) {
			assertThat(consume(limiter, exact, 1).source()).isEqualTo(RateLimitDecision.Source.SHARED);
		}
		assertThat(counting.calls.get()).isEqualTo(20);
		assertThat(limiter.size()).isZero();
	}

	@Test
	void aLeaseDroppedUnspentWhileAnotherInstanceDrainsAddsNothingToTheBucket() {
		// issue 27's attack: 50 at 10 per second, leases of up to 50%; B drains 1.75 s after A's lease
		attack(1_750, new PlanLimits("pro", "attack", List.of(new LimitDefinition("pro-attack", 50, 10, Duration.ofSeconds(1),
				Algorithm.TOKEN_BUCKET, LimitScope.CLIENT, new LeaseBudget(50)))));
	}

	@Test
	void aLeaseDroppedUnspentWhileAnotherInstanceDrainsAddsNothingToEitherBucket() {
		// 40 at 20 per second plus 100 per minute, leases of up to 50% of each; B drains 1.5 s after A's lease (at
		// 20 per second the bucket is nearly full again by 1.75 s)
		attack(1_500, new PlanLimits("pro", "attack2", List.of(
				new LimitDefinition("pro-attack2-s", 40, 20, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET,
						LimitScope.CLIENT, new LeaseBudget(50)),
				new LimitDefinition("pro-attack2-m", 100, 100, Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET,
						LimitScope.CLIENT, new LeaseBudget(50)))));
	}

	/**
	 * Two instances on one Redis, real time, lease duration 1 s. Instance A takes a lease of more than 10 tokens
	 * (after smaller leases spent) and never spends it; some time later instance B takes everything Redis admits; A drops the
	 * client's slot (two lease durations without a request) and sends the lease back, unspent; B takes everything
	 * again. What B was admitted from its first request's send to its last answer is at most capacity + refill over
	 * that time, per limit. (The waits are the attack's timing, not synchronisation: the return is awaited as an
	 * event.) Before issue 27 the late return added the unspent tokens to a bucket that had refilled meanwhile.
	 */
	private void attack(long drainAfterMillis, PlanLimits limits) {
		ReturnWatchingStore watching = new ReturnWatchingStore(store);
		LeasingRateLimiter a = new LeasingRateLimiter(watching, Duration.ofSeconds(1), 1000);
		LeasingRateLimiter b = new LeasingRateLimiter(watching, Duration.ofSeconds(1), 1000);
		// requests back to back until one takes a lease of more than 10 tokens (the leases grow with A's rate)
		long granted = 0;
		for (int i = 0; i < 40 && granted <= 10; i++) {
			assertThat(consume(a, limits, 1).allowed()).isTrue();
			granted = watching.lastGranted.getAndSet(0);
		}
		long leased = System.nanoTime();
		assertThat(granted).as("A's last lease").isGreaterThan(10);
		LockSupport.parkNanos(drainAfterMillis * 1_000_000L - (System.nanoTime() - leased));
		long start = System.nanoTime();
		long admitted = drain(b, limits);
		watching.returned.orTimeout(30, TimeUnit.SECONDS).join();
		admitted += drain(b, limits);
		double seconds = (System.nanoTime() - start) / 1e9;
		for (LimitDefinition limit : limits.limits()) {
			double bound = limit.capacity()
					+ (double) limit.refillTokens() * seconds / (limit.refillPeriod().toNanos() / 1e9);
			assertThat((double) admitted)
				.as("B admitted in %.3f s, %s; A's unspent lease of %d went back", seconds, limit.policyName(),
						watching.returnedUnused.get())
				.isLessThanOrEqualTo(bound);
		}
		a.stop();
		b.stop();
	}

	/** Requests until one is denied; returns how many were allowed. */
	private long drain(LeasingRateLimiter limiter, PlanLimits limits) {
		long admitted = 0;
		while (admitted < 1_000 && consume(limiter, limits, 1).allowed()) {
			admitted++;
		}
		return admitted;
	}

	/** The Redis store; notes the tokens of the last lease granted and completes when a lease goes back alone. */
	private static final class ReturnWatchingStore implements RateLimitStore, LeaseStore {

		final AtomicLong lastGranted = new AtomicLong();

		final AtomicLong returnedUnused = new AtomicLong();

		final CompletableFuture<Void> returned = new CompletableFuture<>();

		private final RedisRateLimitStore store;

		ReturnWatchingStore(RedisRateLimitStore store) {
			this.store = store;
		}

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
			return this.store.tryConsume(client, limits, cost);
		}

		@Override
		public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
				long durationMicros, ReturnedLease previous) {
			return this.store.lease(client, limits, cost, wanted, durationMicros, previous).whenComplete((lease, ex) -> {
				if (cost == 0 && wanted == 0) {
					this.returnedUnused.set(previous.unused());
					this.returned.complete(null);
				}
				else if (lease != null && lease.tokens() > 0) {
					this.lastGranted.set(lease.tokens());
				}
			});
		}

	}

	/** 2,000 tokens refilled 1 per hour (no refill during a test), leases of up to 5%. */
	private static PlanLimits hourly() {
		return new PlanLimits("pro", "hourly", List.of(new LimitDefinition("pro-hourly", 2_000, 1, Duration.ofHours(1),
				Algorithm.TOKEN_BUCKET, LimitScope.CLIENT, new LeaseBudget(5))));
	}

	private LeasingRateLimiter leasing() {
		return new LeasingRateLimiter(store, Duration.ofSeconds(1), 1000);
	}

	private RateLimitDecision consume(LeasingRateLimiter limiter, PlanLimits limits, long cost) {
		return limiter.tryConsume(this.alice, limits, cost).orTimeout(10, TimeUnit.SECONDS).join();
	}

	/** The Redis store, counting its script calls. */
	private static class CountingStore implements RateLimitStore, LeaseStore {

		final AtomicLong calls = new AtomicLong();

		private final RedisRateLimitStore store;

		CountingStore(RedisRateLimitStore store) {
			this.store = store;
		}

		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
			this.calls.incrementAndGet();
			return this.store.tryConsume(client, limits, cost);
		}

		@Override
		public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
				long durationMicros, ReturnedLease previous) {
			this.calls.incrementAndGet();
			return this.store.lease(client, limits, cost, wanted, durationMicros, previous);
		}

	}

}
