package io.github.ratelimit.gateway.plan;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.github.benmanes.caffeine.cache.Ticker;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CachingPlanResolverTest {

	private static final Duration TTL = Duration.ofMinutes(5);

	private static final Duration NEGATIVE_TTL = Duration.ofSeconds(30);

	private static final Duration MAX_STALE = Duration.ofHours(1);

	private final FakeTicker ticker = new FakeTicker();

	private final FakeStore store = new FakeStore();

	@Test
	void aKnownKeyIsLookedUpOnceAndServedFromTheCache() {
		this.store.plans.put(PlanStore.keyHash("key-1"), "pro");
		CachingPlanResolver resolver = resolver(100, 0);
		for (int i = 0; i < 5; i++) {
			assertThat(plan(resolver, "key-1")).isEqualTo("pro");
		}
		assertThat(this.store.lookups).hasValue(1);
		assertThat(this.store.seen).containsExactly(PlanStore.keyHash("key-1")).noneMatch((h) -> h.contains("key-1"));
		assertThat(resolver.stats().hitCount()).isEqualTo(4);
	}

	@Test
	void unknownKeysAreCachedForTheNegativeTtl() {
		CachingPlanResolver resolver = resolver(100, 0);
		assertThat(plan(resolver, "fake")).isNull();
		this.ticker.advance(NEGATIVE_TTL.minusSeconds(1));
		assertThat(plan(resolver, "fake")).isNull();
		assertThat(this.store.lookups).hasValue(1);
		// provisioned meanwhile: seen once the negative entry expired
		this.store.plans.put(PlanStore.keyHash("fake"), "free");
		this.ticker.advance(Duration.ofSeconds(2));
		assertThat(plan(resolver, "fake")).isEqualTo("free");
		assertThat(this.store.lookups).hasValue(2);
	}

	@Test
	void afterTheTtlAKeyIsLookedUpAgain() {
		this.store.plans.put(PlanStore.keyHash("key-1"), "free");
		CachingPlanResolver resolver = resolver(100, 0);
		assertThat(plan(resolver, "key-1")).isEqualTo("free");
		this.store.plans.put(PlanStore.keyHash("key-1"), "pro"); // upgraded
		this.ticker.advance(TTL.minusSeconds(1));
		assertThat(plan(resolver, "key-1")).isEqualTo("free");
		this.ticker.advance(Duration.ofSeconds(2));
		plan(resolver, "key-1"); // triggers the look-up (and gets its result if it is immediate)
		assertThat(plan(resolver, "key-1")).isEqualTo("pro");
		assertThat(this.store.lookups).hasValue(2);
		// revoked: unknown after the next ttl
		this.store.plans.remove(PlanStore.keyHash("key-1"));
		this.ticker.advance(TTL.plusSeconds(1));
		plan(resolver, "key-1");
		assertThat(plan(resolver, "key-1")).isNull();
	}

	@Test
	void whileTheStoreIsDownCachedPlansStayInUseUpToMaxStale() {
		this.store.plans.put(PlanStore.keyHash("key-1"), "pro");
		CachingPlanResolver resolver = resolver(100, 0);
		assertThat(plan(resolver, "key-1")).isEqualTo("pro");
		this.store.down = true;
		this.ticker.advance(TTL.plusSeconds(1));
		assertThat(plan(resolver, "key-1")).isEqualTo("pro"); // refresh fails: kept
		this.ticker.advance(TTL);
		assertThat(plan(resolver, "key-1")).isEqualTo("pro");
		// an uncached key cannot be looked up: unknown, and not cached
		assertThat(plan(resolver, "key-2")).isNull();
		int lookups = this.store.lookups.get();
		assertThat(plan(resolver, "key-2")).isNull();
		assertThat(this.store.lookups).hasValue(lookups + 1);
		// past ttl + max stale the cached plan is dropped
		this.ticker.advance(MAX_STALE);
		assertThat(plan(resolver, "key-1")).isNull();
		// the store is back: looked up again
		this.store.down = false;
		this.store.plans.put(PlanStore.keyHash("key-2"), "free");
		assertThat(plan(resolver, "key-1")).isEqualTo("pro");
		assertThat(plan(resolver, "key-2")).isEqualTo("free");
	}

	@Test
	void aSlowStoreTimesOutAndNothingIsCached() throws Exception {
		AtomicInteger lookups = new AtomicInteger();
		PlanStore slow = (hash) -> {
			lookups.incrementAndGet();
			return new CompletableFuture<>();
		};
		CachingPlanResolver resolver = new CachingPlanResolver(slow, null,
				new CachingPlanResolver.Settings(100, TTL, NEGATIVE_TTL, MAX_STALE, Duration.ofMillis(50), 0),
				this.ticker);
		assertThat(resolver.resolvePlan(ApiKey.of("key-1")).toCompletableFuture().get(2, TimeUnit.SECONDS)).isEmpty();
		assertThat(resolver.resolvePlan(ApiKey.of("key-1")).toCompletableFuture().get(2, TimeUnit.SECONDS)).isEmpty();
		assertThat(lookups).hasValue(2);
	}

	@Test
	void concurrentRequestsForOneUncachedKeyShareOneLookup() {
		CompletableFuture<Optional<String>> answer = new CompletableFuture<>();
		AtomicInteger lookups = new AtomicInteger();
		PlanStore pending = (hash) -> {
			lookups.incrementAndGet();
			return answer;
		};
		CachingPlanResolver resolver = new CachingPlanResolver(pending, null,
				new CachingPlanResolver.Settings(100, TTL, NEGATIVE_TTL, MAX_STALE, Duration.ofSeconds(5), 0),
				this.ticker);
		List<CompletionStage<Optional<String>>> waiting = List.of(resolver.resolvePlan(ApiKey.of("key-1")),
				resolver.resolvePlan(ApiKey.of("key-1")), resolver.resolvePlan(ApiKey.of("key-1")));
		// one waiter giving up (a cancelled request) does not cancel the shared look-up
		resolver.resolvePlan(ApiKey.of("key-1")).toCompletableFuture().cancel(false);
		answer.complete(Optional.of("pro"));
		assertThat(waiting).map((plan) -> plan.toCompletableFuture().join().orElse(null))
			.containsExactly("pro", "pro", "pro");
		assertThat(lookups).hasValue(1);
	}

	@Test
	void rotatingRandomKeysCostABoundedNumberOfLookups() {
		this.store.plans.put(PlanStore.keyHash("real"), "pro");
		CachingPlanResolver resolver = resolver(1_000, 100);
		assertThat(plan(resolver, "real")).isEqualTo("pro");
		for (int i = 0; i < 1_000; i++) {
			assertThat(plan(resolver, "random-" + i)).isNull();
		}
		assertThat(this.store.lookups).hasValue(100); // the budget: 100 per second
		// keys already cached are unaffected
		assertThat(plan(resolver, "real")).isEqualTo("pro");
		// the budget refills with time
		this.ticker.advance(Duration.ofMillis(500));
		for (int i = 0; i < 1_000; i++) {
			plan(resolver, "other-" + i);
		}
		assertThat(this.store.lookups).hasValue(150);
	}

	@Test
	void theCacheIsBoundedAndKeepsTheKeysOfActiveClientsThroughAFloodOfOneOffKeys() {
		this.store.plans.put(PlanStore.keyHash("real"), "pro");
		// the cache's maintenance on this thread: with Caffeine's default (the common pool) a loaded machine let the
		// lossy read buffer drop some of the real key's reads, and the key was once evicted during the flood
		CachingPlanResolver resolver = new CachingPlanResolver(this.store, null, new CachingPlanResolver.Settings(100,
				TTL, NEGATIVE_TTL, MAX_STALE, Duration.ofSeconds(1), 0), this.ticker, Runnable::run);
		for (int i = 0; i < 10; i++) {
			plan(resolver, "real");
		}
		for (int i = 0; i < 5_000; i++) {
			plan(resolver, "one-off-" + i);
			if (i % 10 == 0) {
				plan(resolver, "real"); // the real client keeps sending
			}
		}
		resolver.cleanUp();
		assertThat(resolver.estimatedSize()).isLessThanOrEqualTo(100);
		assertThat(this.store.seen).contains(PlanStore.keyHash("real"));
		assertThat(this.store.lookups).as("one look-up per one-off key, the real key's only once").hasValue(5_001);
	}

	@Test
	void aPlanTheConfigurationDoesNotDefineCountsAsUnknown() {
		this.store.plans.put(PlanStore.keyHash("key-1"), "gold");
		this.store.plans.put(PlanStore.keyHash("key-2"), "pro");
		CachingPlanResolver resolver = new CachingPlanResolver(this.store, Set.of("free", "pro"),
				new CachingPlanResolver.Settings(100, TTL, NEGATIVE_TTL, MAX_STALE, Duration.ofSeconds(1), 0),
				this.ticker);
		assertThat(plan(resolver, "key-1")).isNull();
		assertThat(plan(resolver, "key-2")).isEqualTo("pro");
	}

	@Test
	void theHashIsSha256Base64Url() {
		// printf %s 'demo-pro-key' | openssl dgst -sha256 -binary | basenc --base64url | tr -d =
		assertThat(PlanStore.keyHash("demo-pro-key")).hasSize(43).matches("[A-Za-z0-9_-]+");
		assertThat(PlanStore.keyHash("abc")).isEqualTo("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
	}

	/** The plan the resolver answers for a key, waiting for it; {@code null} when unknown. */
	private static String plan(CachingPlanResolver resolver, String apiKey) {
		return resolver.resolvePlan(ApiKey.of(apiKey)).toCompletableFuture().join().orElse(null);
	}

	private CachingPlanResolver resolver(long maxSize, int maxLookupsPerSecond) {
		return new CachingPlanResolver(this.store, null, new CachingPlanResolver.Settings(maxSize, TTL, NEGATIVE_TTL,
				MAX_STALE, Duration.ofSeconds(1), maxLookupsPerSecond), this.ticker);
	}

	static final class FakeTicker implements Ticker {

		private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

		@Override
		public long read() {
			return this.nanos.get();
		}

		void advance(Duration duration) {
			this.nanos.addAndGet(duration.toNanos());
		}

	}

	static final class FakeStore implements PlanStore {

		final Map<String, String> plans = new ConcurrentHashMap<>();

		final AtomicInteger lookups = new AtomicInteger();

		final Set<String> seen = ConcurrentHashMap.newKeySet();

		volatile boolean down;

		@Override
		public CompletionStage<Optional<String>> findPlan(String keyHash) {
			this.lookups.incrementAndGet();
			this.seen.add(keyHash);
			if (this.down) {
				return CompletableFuture.failedFuture(new IllegalStateException("store down"));
			}
			return CompletableFuture.completedFuture(Optional.ofNullable(this.plans.get(keyHash)));
		}

	}

}
