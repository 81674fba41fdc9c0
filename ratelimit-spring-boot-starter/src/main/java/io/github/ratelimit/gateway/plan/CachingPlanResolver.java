package io.github.ratelimit.gateway.plan;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeoutException;

import com.github.benmanes.caffeine.cache.AsyncCacheLoader;
import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import com.github.benmanes.caffeine.cache.stats.CacheStats;
import io.github.ratelimit.gateway.support.ThrottledLog;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PlanResolver} over a {@link PlanStore} (e.g. Redis) with a bounded local Caffeine cache, so that a check
 * costs a store look-up only for keys this instance has not seen recently.
 *
 * <ul>
 * <li>Known keys are cached for {@link Settings#ttl()}; the first request after it triggers a new look-up and does
 * not wait for it (it gets the cached plan unless the answer is immediate). If that look-up fails (store
 * unreachable), the cached plan
 * keeps being used for up to {@link Settings#maxStale()} more, so clients keep their plan through an outage.</li>
 * <li>Unknown keys are cached too (negative caching), for the shorter {@link Settings#negativeTtl()}: a client
 * repeating a fake key costs one look-up per negative TTL, not one per request.</li>
 * <li>Look-ups of keys not in the cache are bounded per second ({@link Settings#maxLookupsPerSecond()}): beyond
 * the bound a key is treated as unknown for that request, without a look-up and without touching the cache, so a
 * client rotating random fake keys costs the store a bounded load and cannot push real keys out of the cache.</li>
 * <li>Concurrent requests for the same uncached key share one look-up. Failed or timed-out look-ups are not cached
 * and the request is limited by IP (the key counts as unknown). A store answer naming a plan the configuration
 * does not define counts as unknown (and is logged).</li>
 * <li>At most {@link Settings#maxSize()} keys are held; Caffeine's frequency-based admission keeps the keys of
 * active clients when one-off keys flood in.</li>
 * </ul>
 * The cache is keyed by the key's {@link ApiKey#hash() hash}: no raw credential is held. Problems are
 * logged at WARN at most once per 10 s each.
 */
public class CachingPlanResolver implements PlanResolver {

	private static final Logger logger = LoggerFactory.getLogger(CachingPlanResolver.class);

	private static final Duration LOG_INTERVAL = Duration.ofSeconds(10);

	private final PlanStore store;

	private final @Nullable Set<String> knownPlans;

	private final Settings settings;

	private final Ticker ticker;

	private final AsyncLoadingCache<String, Lookup> cache;

	private final @Nullable LookupBudget budget;

	private final ThrottledLog failureWarning = new ThrottledLog(LOG_INTERVAL);

	private final ThrottledLog budgetWarning = new ThrottledLog(LOG_INTERVAL);

	private final ThrottledLog unknownPlanWarning = new ThrottledLog(LOG_INTERVAL);

	/**
	 * Create a resolver.
	 * @param store where plans are looked up
	 * @param knownPlans the plans the configuration defines ({@code ratelimit.plans}); a stored plan outside it counts
	 * as unknown, or {@code null} to accept every name
	 * @param settings cache and look-up settings
	 */
	public CachingPlanResolver(PlanStore store, @Nullable Set<String> knownPlans, Settings settings) {
		this(store, knownPlans, settings, Ticker.systemTicker());
	}

	CachingPlanResolver(PlanStore store, @Nullable Set<String> knownPlans, Settings settings, Ticker ticker) {
		this(store, knownPlans, settings, ticker, ForkJoinPool.commonPool());
	}

	/**
	 * A resolver whose cache runs its maintenance (eviction, admission statistics) and loads on the given executor;
	 * Caffeine's default is the common pool.
	 */
	CachingPlanResolver(PlanStore store, @Nullable Set<String> knownPlans, Settings settings, Ticker ticker,
			Executor executor) {
		this.store = store;
		this.knownPlans = (knownPlans != null) ? Set.copyOf(knownPlans) : null;
		this.settings = settings;
		this.ticker = ticker;
		this.budget = (settings.maxLookupsPerSecond() > 0) ? new LookupBudget(settings.maxLookupsPerSecond(), ticker)
				: null;
		this.cache = Caffeine.newBuilder()
			.maximumSize(settings.maxSize())
			.refreshAfterWrite(settings.ttl())
			.expireAfter(new LookupExpiry(settings))
			.ticker(ticker)
			.executor(executor)
			.recordStats()
			.buildAsync(new Loader());
	}

	@Override
	public CompletionStage<Optional<String>> resolvePlan(ApiKey apiKey) {
		String keyHash = apiKey.hash();
		CompletableFuture<Lookup> lookup = this.cache.getIfPresent(keyHash);
		if (lookup != null && lookup.isDone() && !lookup.isCompletedExceptionally()
				&& lookup.join().kind() == Lookup.Kind.NOT_LOOKED_UP) {
			// a failed look-up is never cached (expiry 0), but Caffeine drops it only once its completion callback
			// has run, which may be after the waiting request went on: look it up again rather than reuse the failure
			this.cache.asMap().remove(keyHash, lookup);
			lookup = null;
		}
		if (lookup == null) {
			if (this.budget != null && !this.budget.tryAcquire()) {
				// neither looked up nor cached: a flood of random keys must not push real ones out of the cache
				this.budgetWarning.log((skipped) -> logger.warn("More than {} plan look-ups per second of keys not in "
						+ "the cache; further unknown keys are limited by IP without a look-up (a client sending "
						+ "random keys?){}", this.settings.maxLookupsPerSecond(), ThrottledLog.notLogged(skipped)));
				return Plans.UNKNOWN;
			}
			lookup = this.cache.get(keyHash);
		}
		if (lookup.isDone()) {
			return lookup.join().plan();
		}
		// a dependent stage: cancelling it leaves the look-up, which other requests may wait on, alone
		return lookup.thenCompose(Lookup::plan);
	}

	/**
	 * Statistics of the cache (hits, misses, loads, evictions) since start.
	 * @return the statistics
	 */
	public CacheStats stats() {
		return this.cache.synchronous().stats();
	}

	/**
	 * Approximate number of cached keys, known and unknown.
	 * @return the number
	 */
	public long estimatedSize() {
		return this.cache.synchronous().estimatedSize();
	}

	/** Performs pending cache maintenance (evictions, expirations) now; for tests. */
	void cleanUp() {
		this.cache.synchronous().cleanUp();
	}

	@Override
	public String toString() {
		return "CachingPlanResolver[" + this.store + ", max " + this.settings.maxSize() + " keys, ttl "
				+ this.settings.ttl() + ", negative ttl " + this.settings.negativeTtl() + "]";
	}

	private CompletableFuture<Lookup> lookUp(String keyHash) {
		CompletableFuture<Optional<String>> found;
		try {
			// a copy: the timeout completes it, not the store's own future
			found = this.store.findPlan(keyHash).toCompletableFuture().thenApply((plan) -> plan);
		}
		catch (RuntimeException ex) {
			found = CompletableFuture.failedFuture(ex);
		}
		return found.orTimeout(this.settings.timeout().toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)
			.handle((plan, ex) -> {
				if (ex == null) {
					return (plan != null && plan.isPresent()) ? known(keyHash, plan.get())
							: Lookup.unknown(this.ticker.read());
				}
				Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
				this.failureWarning.log((skipped) -> logger.warn(
						"Plan look-up failed ({}); keys not in the cache are limited by IP under the anonymous plan, "
								+ "cached plans stay in use{}",
						(cause instanceof TimeoutException) ? "no answer within " + this.settings.timeout()
								: cause.toString(),
						ThrottledLog.notLogged(skipped)));
				return Lookup.FAILED;
			});
	}

	private Lookup known(String keyHash, String plan) {
		long now = this.ticker.read();
		if (this.knownPlans != null && !this.knownPlans.contains(plan)) {
			this.unknownPlanWarning.log((skipped) -> logger.warn(
					"The plan store maps API key sha256:{} to plan '{}', which ratelimit.plans does not define; "
							+ "the key is limited by IP under the anonymous plan{}",
					keyHash.substring(0, 8), plan, ThrottledLog.notLogged(skipped)));
			return Lookup.unknown(now);
		}
		return Lookup.known(plan, now);
	}

	/**
	 * Settings of a {@link CachingPlanResolver}.
	 *
	 * @param maxSize most keys cached (at least 1)
	 * @param ttl how long a known key's plan is used before it is looked up again (positive)
	 * @param negativeTtl how long an unknown key is cached as unknown (0 = not cached)
	 * @param maxStale how long past {@code ttl} a plan is still used while it cannot be looked up again
	 * @param timeout longest wait for one look-up
	 * @param maxLookupsPerSecond most look-ups per second of keys not in the cache (0 = no bound)
	 */
	public record Settings(long maxSize, Duration ttl, Duration negativeTtl, Duration maxStale, Duration timeout,
			int maxLookupsPerSecond) {

		/**
		 * Check the settings.
		 */
		public Settings {
			if (maxSize < 1 || ttl.isZero() || ttl.isNegative() || negativeTtl.isNegative() || maxStale.isNegative()
					|| timeout.isZero() || timeout.isNegative() || maxLookupsPerSecond < 0) {
				throw new IllegalArgumentException("Invalid plan cache settings: " + maxSize + ", " + ttl + ", "
						+ negativeTtl + ", " + maxStale + ", " + timeout + ", " + maxLookupsPerSecond);
			}
		}

	}

	/** The outcome of one look-up. */
	private record Lookup(Kind kind, @Nullable String planName, long loadedAt) {

		static final Lookup FAILED = new Lookup(Kind.NOT_LOOKED_UP, null, 0);

		static Lookup known(String plan, long now) {
			return new Lookup(Kind.KNOWN, plan, now);
		}

		static Lookup unknown(long now) {
			return new Lookup(Kind.UNKNOWN, null, now);
		}

		CompletionStage<Optional<String>> plan() {
			return (this.kind == Kind.KNOWN) ? Plans.of(this.planName) : Plans.UNKNOWN;
		}

		/** The same outcome as a new instance, so that the cache counts it as written again. */
		Lookup kept() {
			return new Lookup(this.kind, this.planName, this.loadedAt);
		}

		enum Kind {

			KNOWN, UNKNOWN,

			/** Failed or timed out: not cached. */
			NOT_LOOKED_UP

		}

	}

	private final class Loader implements AsyncCacheLoader<String, Lookup> {

		@Override
		public CompletableFuture<Lookup> asyncLoad(String keyHash, Executor executor) {
			return lookUp(keyHash);
		}

		@Override
		public CompletableFuture<Lookup> asyncReload(String keyHash, Lookup oldValue, Executor executor) {
			// a failed look-up keeps the cached outcome (its expiry still counts from when it was loaded)
			return lookUp(keyHash)
				.thenApply((lookup) -> (lookup.kind() == Lookup.Kind.NOT_LOOKED_UP) ? oldValue.kept() : lookup);
		}

	}

	/** Known: ttl + max stale from loading; unknown: negative ttl from loading; not looked up: not cached. */
	private static final class LookupExpiry implements Expiry<String, Lookup> {

		private final long knownNanos;

		private final long unknownNanos;

		LookupExpiry(Settings settings) {
			this.knownNanos = saturatedNanos(settings.ttl().plus(settings.maxStale()));
			this.unknownNanos = saturatedNanos(settings.negativeTtl());
		}

		@Override
		public long expireAfterCreate(String key, Lookup value, long currentTime) {
			return remaining(value, currentTime);
		}

		@Override
		public long expireAfterUpdate(String key, Lookup value, long currentTime, long currentDuration) {
			return remaining(value, currentTime);
		}

		@Override
		public long expireAfterRead(String key, Lookup value, long currentTime, long currentDuration) {
			return currentDuration;
		}

		private long remaining(Lookup value, long currentTime) {
			long lifetime = switch (value.kind()) {
				case KNOWN -> this.knownNanos;
				case UNKNOWN -> this.unknownNanos;
				case NOT_LOOKED_UP -> 0;
			};
			long age = Math.max(0, currentTime - value.loadedAt());
			return Math.max(0, lifetime - age);
		}

		private static long saturatedNanos(Duration duration) {
			try {
				return duration.toNanos();
			}
			catch (ArithmeticException ex) {
				return Long.MAX_VALUE;
			}
		}

	}

	/**
	 * A token bucket of look-ups: {@code perSecond} per second, bursts up to the same number, on the cache's ticker.
	 */
	private static final class LookupBudget {

		private final long perSecond;

		private final Ticker ticker;

		private double tokens;

		private long last;

		LookupBudget(long perSecond, Ticker ticker) {
			this.perSecond = perSecond;
			this.ticker = ticker;
			this.tokens = perSecond;
			this.last = ticker.read();
		}

		synchronized boolean tryAcquire() {
			long now = this.ticker.read();
			this.tokens = Math.min(this.perSecond, this.tokens + (now - this.last) * this.perSecond / 1e9);
			this.last = now;
			if (this.tokens >= 1) {
				this.tokens -= 1;
				return true;
			}
			return false;
		}

	}

}
