package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

class LocalFallbackLimiterTest {

	private static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.API_KEY, "hash", "free");

	/** 2026-12-05T00:00Z: the start of a day in UTC, of an hour, and of a fixed period of 1 h. */
	private static final Instant DAY = Instant.parse("2026-12-05T00:00:00Z");

	private static final long HOUR_MS = Duration.ofHours(1).toMillis();

	private static final long DAY_MS = Duration.ofDays(1).toMillis();

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	private final AtomicInteger instances = new AtomicInteger(2);

	/** The gateway's wall clock (epoch ms), for quotas: the start of a UTC day unless a test moves it. */
	private final AtomicLong wall = new AtomicLong(DAY.toEpochMilli());

	private final LocalFallbackLimiter limiter = new LocalFallbackLimiter(1_000, this.instances::get,
			this.nanos::get, this.wall::get);

	@Test
	void holdsThisInstancesShareOfEachLimit() {
		PlanLimits limits = limits(new LimitDefinition("free-api", 4, 4, Duration.ofSeconds(1)));
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isTrue();
		RateLimitDecision third = consume(limits);
		assertThat(third.allowed()).isFalse();
		assertThat(third.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		// share of the refill: 2 tokens/s, so one token after 500 ms
		assertThat(third.retryAfterMillis()).isEqualTo(500);
		this.nanos.addAndGet(Duration.ofMillis(500).toNanos());
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isFalse();
	}

	@Test
	void aUsageLimitsShareIsReservedAndSettledInItsUnit() {
		// 1,000 tokens per hour over 2 instances: 500 here; 10 requests per hour: 5 here
		LimitDefinition requests = new LimitDefinition("free-chat", 10, 10, Duration.ofHours(1));
		LimitDefinition tokens = new LimitDefinition("free-chat-tokens", 1_000, 1_000, Duration.ofHours(1))
			.withUnit("tokens");
		PlanLimits limits = limits(requests, tokens);
		RateLimitDecision first = this.limiter.consume(CLIENT, limits, Cost.reserving(1, 300));
		assertThat(first.allowed()).isTrue();
		assertThat(first.statuses().get(1).remaining()).isEqualTo(200);
		assertThat(this.limiter.consume(CLIENT, limits, Cost.reserving(1, 300)).allowed()).isFalse();
		assertThat(first.reservation().settle(100)).isCompletedWithValue(100L); // 200 of the 300 back
		RateLimitDecision second = this.limiter.consume(CLIENT, limits, Cost.reserving(1, 300));
		assertThat(second.allowed()).isTrue();
		assertThat(second.statuses().get(1).remaining()).isEqualTo(100);
		// 600 used: 300 more charged, the local bucket owes 200
		assertThat(second.reservation().settle(600)).isCompletedWithValue(600L);
		RateLimitDecision owing = this.limiter.consume(CLIENT, limits, Cost.reserving(1, 1));
		assertThat(owing.allowed()).isFalse();
		assertThat(owing.statuses().get(1).remaining()).isZero();
		// 201 tokens at 500 per hour (this instance's share): 1,447.2 s
		assertThat(owing.statuses().get(1).retryAfterMillis()).isEqualTo(1_447_200);
		second.reservation().settle(0); // settled once: nothing changes
		assertThat(this.limiter.consume(CLIENT, limits, Cost.reserving(1, 1)).allowed()).isFalse();
		// an answer that does not count gives everything back, its request token too
		RateLimitDecision cancelled = this.limiter.consume(new ClientKey(ClientKey.Kind.API_KEY, "other", "free"), limits,
				Cost.reserving(1, 100));
		cancelled.reservation().cancel();
		RateLimitDecision read = this.limiter.consume(new ClientKey(ClientKey.Kind.API_KEY, "other", "free"), limits,
				Cost.NONE);
		assertThat(read.statuses().get(0).remaining()).isEqualTo(5);
		assertThat(read.statuses().get(1).remaining()).isEqualTo(500);
		// a local bucket owes at most its share: what it cannot take is answered as not charged (the meters' forgiven)
		ClientKey third = new ClientKey(ClientKey.Kind.API_KEY, "third", "free");
		RateLimitDecision large = this.limiter.consume(third, limits, Cost.reserving(1, 100));
		assertThat(large.reservation().settle(2_000)).isCompletedWithValue(1_000L);
	}

	@Test
	void aConcurrencyLimitsShareIsWholeSlotsGivenBackOnRelease() {
		// 5 in flight over 2 instances: 2 here (never more than the whole across instances), at least 1
		PlanLimits limits = limits(LimitDefinition.concurrency("free-api-concurrency", 5, Duration.ofSeconds(30)));
		RateLimitDecision first = consume(limits);
		RateLimitDecision second = consume(limits);
		RateLimitDecision third = consume(limits);
		assertThat(first.allowed()).isTrue();
		assertThat(second.allowed()).isTrue();
		assertThat(third.allowed()).isFalse();
		assertThat(third.slots()).isSameAs(HeldSlots.NONE);
		assertThat(third.retryAfterMillis()).isEqualTo(LocalFallbackLimiter.LOCAL_SLOT_RETRY_MILLIS);
		// within max-request-duration (30 s), time alone frees nothing
		this.nanos.addAndGet(Duration.ofSeconds(29).toNanos());
		assertThat(consume(limits).allowed()).isFalse();
		first.slots().release();
		first.slots().release(); // once only
		RateLimitDecision fourth = consume(limits);
		assertThat(fourth.allowed()).isTrue();
		assertThat(fourth.statuses().get(0).remaining()).isZero();
		assertThat(consume(limits).allowed()).isFalse();
		this.instances.set(9);
		// 5 over 9 instances: still one slot each
		assertThat(consume(limits(LimitDefinition.concurrency("other", 5, Duration.ofSeconds(30)))).allowed()).isTrue();
	}

	@Test
	void aLocalSlotNeverGivenBackIsFreeAgainAfterMaxRequestDurationAndNotBefore() {
		this.instances.set(1);
		PlanLimits limits = limits(LimitDefinition.concurrency("free-api-concurrency", 1, Duration.ofSeconds(30)));
		assertThat(consume(limits).allowed()).isTrue(); // never released
		this.nanos.addAndGet(Duration.ofSeconds(30).toNanos() - 1);
		assertThat(consume(limits).allowed()).isFalse();
		this.nanos.addAndGet(1);
		RateLimitDecision after = consume(limits);
		assertThat(after.allowed()).isTrue();
		after.slots().release();
		assertThat(consume(limits).allowed()).isTrue();
	}

	@Test
	void slotsTakenInTheSharedStoreCountAgainstTheShareUntilTheyEnd() {
		this.instances.set(1);
		LimitDefinition concurrency = LimitDefinition.concurrency("free-api-concurrency", 2, Duration.ofSeconds(30));
		PlanLimits limits = limits(concurrency);
		StoreSlots first = new StoreSlots();
		StoreSlots second = new StoreSlots();
		long start = this.nanos.get();
		RateLimitDecision a = this.limiter.countStoreSlots(CLIENT, Cost.tokens(1), admitted(limits, first));
		this.nanos.addAndGet(Duration.ofSeconds(10).toNanos());
		RateLimitDecision b = this.limiter.countStoreSlots(CLIENT, Cost.tokens(1), admitted(limits, second));
		// the store becomes unavailable: the fallback admits nothing on top of the two in flight
		assertThat(consume(limits).allowed()).isFalse();

		// given back: in the store, and here
		b.slots().release();
		assertThat(second.released).hasValue(1);
		RateLimitDecision local = consume(limits);
		assertThat(local.allowed()).isTrue();
		assertThat(consume(limits).allowed()).isFalse();
		local.slots().release();

		// kept: left in the store (no call), counted here until max-request-duration after it was taken
		a.slots().keep();
		a.slots().release(); // ended already: nothing
		assertThat(first.kept).hasValue(1);
		assertThat(first.released).hasValue(0);
		RateLimitDecision beside = consume(limits);
		assertThat(beside.allowed()).isTrue();
		assertThat(consume(limits).allowed()).isFalse();
		beside.slots().release();
		this.nanos.set(start + Duration.ofSeconds(30).toNanos() - 1);
		RateLimitDecision justBefore = consume(limits);
		assertThat(justBefore.allowed()).isTrue();
		assertThat(consume(limits).allowed()).as("the kept slot still counts").isFalse();
		justBefore.slots().release();
		this.nanos.set(start + Duration.ofSeconds(30).toNanos());
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).as("the kept slot has expired").isTrue();
		assertThat(consume(limits).allowed()).isFalse();
	}

	@Test
	void keptStoreSlotsAreForgottenOnceExpiredWhileOnlyTheSharedStoreDecides() {
		this.instances.set(1);
		PlanLimits limits = limits(LimitDefinition.concurrency("free-api-concurrency", 3, Duration.ofSeconds(30)));
		// a client that hangs up on every request: each slot kept, none ever given back, no fallback decision
		for (int i = 0; i < 100; i++) {
			this.limiter.countStoreSlots(CLIENT, Cost.tokens(1), admitted(limits, new StoreSlots())).slots().keep();
			this.nanos.addAndGet(Duration.ofSeconds(1).toNanos());
		}
		assertThat(this.limiter.slotCount()).as("slots younger than max-request-duration, and the new one")
			.isEqualTo(30);
	}

	@Test
	void anAbandonedStoreSlotIsGivenBackHereAndADecisionWithoutSlotsIsLeftAlone() {
		this.instances.set(1);
		PlanLimits limits = limits(LimitDefinition.concurrency("free-api-concurrency", 1, Duration.ofSeconds(30)));
		StoreSlots store = new StoreSlots();
		RateLimitDecision admitted = this.limiter.countStoreSlots(CLIENT, Cost.tokens(1), admitted(limits, store));
		assertThat(consume(limits).allowed()).isFalse();
		admitted.slots().abandon();
		assertThat(store.abandoned).hasValue(1);
		assertThat(consume(limits).allowed()).isTrue();

		RateLimitDecision rateOnly = RateLimitDecision.shared(limits(new LimitDefinition("free-api", 4, 4,
				Duration.ofSeconds(1))), true, List.of());
		assertThat(this.limiter.countStoreSlots(CLIENT, Cost.tokens(1), rateOnly)).isSameAs(rateOnly);
		RateLimitDecision denied = RateLimitDecision.shared(limits, false, List.of());
		assertThat(this.limiter.countStoreSlots(CLIENT, Cost.tokens(1), denied)).isSameAs(denied);
	}

	@Test
	void aRateLimitDenialTakesNoSlotAndASlotDenialTakesNoToken() {
		this.instances.set(1);
		PlanLimits limits = limits(new LimitDefinition("free-api-1h", 2, 2, Duration.ofHours(1)),
				LimitDefinition.concurrency("free-api-concurrency", 1, Duration.ofSeconds(30)));
		RateLimitDecision held = consume(limits);
		assertThat(held.allowed()).isTrue();
		RateLimitDecision bySlot = consume(limits);
		assertThat(bySlot.allowed()).isFalse();
		assertThat(bySlot.statuses().get(0).remaining()).isEqualTo(1);
		held.slots().release();
		assertThat(consume(limits).allowed()).isTrue(); // the last token, and the slot
		RateLimitDecision byRate = consume(limits);
		assertThat(byRate.allowed()).isFalse();
		assertThat(byRate.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-api-1h",
				"free-api-concurrency");
	}

	@Test
	void deniedRequestConsumesFromNoLimit() {
		PlanLimits limits = limits(new LimitDefinition("free-api-1s", 20, 20, Duration.ofSeconds(1)),
				new LimitDefinition("free-api-1h", 2, 2, Duration.ofHours(1)));
		this.instances.set(1);
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isTrue();
		RateLimitDecision denied = consume(limits);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.statuses().get(0).remaining()).isEqualTo(18);
		assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-api-1h");
	}

	@Test
	void shareNeverFallsBelowTheCost() {
		// capacity 3 over 4 instances is 0.75 tokens: the share is raised to 1 so the request can pass at all
		this.instances.set(4);
		PlanLimits limits = limits(new LimitDefinition("anonymous-login", 3, 3, Duration.ofMinutes(15)));
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isFalse();
	}

	@Test
	void newInstanceCountTakesEffect() {
		PlanLimits limits = limits(new LimitDefinition("free-api", 10, 10, Duration.ofMinutes(1)));
		this.instances.set(5);
		assertThat(consume(limits).statuses().get(0).remaining()).isEqualTo(1);
		this.instances.set(1);
		assertThat(consume(limits).statuses().get(0).remaining()).isEqualTo(9);
	}

	@Test
	void memoryIsBoundedWithManyClients() {
		LocalFallbackLimiter small = new LocalFallbackLimiter(100, () -> 1, this.nanos::get);
		PlanLimits limits = limits(new LimitDefinition("free-api", 10, 10, Duration.ofMinutes(1)));
		for (int i = 0; i < 10_000; i++) {
			small.consume(new ClientKey(ClientKey.Kind.IP, "10.0." + (i / 256) + "." + (i % 256), "anonymous"), limits, Cost.tokens(1));
		}
		assertThat(small.size()).isLessThanOrEqualTo(100);
	}

	@Test
	void globalLimitIsOneShareOfTheGroupForEveryClientAndPlan() {
		// 2 instances: this one holds 4 / 2 = 2 tokens of the group-wide bucket, whoever the client
		LimitDefinition global = new LimitDefinition("api-global", 4, 4, Duration.ofHours(1), Algorithm.TOKEN_BUCKET,
				LimitScope.GLOBAL);
		PlanLimits free = limits(new LimitDefinition("free-api", 10, 10, Duration.ofHours(1)), global);
		PlanLimits pro = new PlanLimits("pro", "api", List.of(new LimitDefinition("pro-api", 100, 100,
				Duration.ofHours(1)), global));
		ClientKey other = new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "pro");
		assertThat(this.limiter.consume(CLIENT, free, Cost.tokens(1)).allowed()).isTrue();
		RateLimitDecision second = this.limiter.consume(other, pro, Cost.tokens(1));
		assertThat(second.allowed()).isTrue();
		// every limit, in configuration order, named as in the request's plan
		assertThat(second.statuses()).extracting((s) -> s.limit().policyName(), (s) -> s.remaining())
			.containsExactly(tuple("pro-api", 49L), tuple("api-global", 0L));
		RateLimitDecision third = this.limiter.consume(new ClientKey(ClientKey.Kind.IP, "192.0.2.2", "free"), free, Cost.tokens(1));
		assertThat(third.allowed()).isFalse();
		assertThat(third.violated()).extracting((s) -> s.limit().policyName()).containsExactly("api-global");
		// the denied client's own bucket was not consumed: 10 / 2 = 5 tokens
		assertThat(third.statuses().get(0).remaining()).isEqualTo(5);
		// the group's share is kept once per group, not per client: 3 clients, 3 client buckets + 1 group bucket
		assertThat(this.limiter.size()).isEqualTo(4);
	}

	@Test
	void clientDeniedByItsOwnLimitTakesNothingFromTheGroupsShare() {
		this.instances.set(1);
		PlanLimits limits = limits(new LimitDefinition("free-api", 1, 1, Duration.ofHours(1)),
				new LimitDefinition("api-global", 3, 3, Duration.ofHours(1), Algorithm.TOKEN_BUCKET, LimitScope.GLOBAL));
		assertThat(consume(limits).allowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			RateLimitDecision denied = consume(limits);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-api");
		}
		ClientKey other = new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "free");
		assertThat(this.limiter.consume(other, limits, Cost.tokens(1)).statuses().get(1).remaining()).isEqualTo(1);
	}

	@Test
	void aQuotasShareIsWhatIsLeftOfItsPeriodWhenTheCountStarts() {
		// 1,000 per UTC day over 2 instances: floor(1000 * left / (2 * 24 h)) when a client's count starts
		PlanLimits limits = limits(dailyQuota(1_000, ZoneOffset.UTC));
		assertThat(admittedAt(limits, DAY, "start")).isEqualTo(500);
		assertThat(admittedAt(limits, DAY.plus(Duration.ofHours(12)), "middle")).isEqualTo(250);
		// 16:14:29.5 left: 1000 * 58,469,500 / 172,800,000 = 338.36
		assertThat(admittedAt(limits, DAY.plus(Duration.ofMillis(27_930_500)), "morning")).isEqualTo(338);
		assertThat(admittedAt(limits, DAY.plus(Duration.ofHours(23)), "late")).isEqualTo(20); // 20.83
		// a minute left: 0.35, so nothing (no minimum of one request: the period's allowance is spent)
		assertThat(admittedAt(limits, DAY.plus(Duration.ofSeconds(86_340)), "last-minute")).isZero();
		RateLimitDecision denied = this.limiter.consume(client("last-minute"), limits, Cost.tokens(1));
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-api-day");
		assertThat(denied.retryAfterMillis()).isEqualTo(60_000); // until the period's end
		// the denial of the client counted at noon: until midnight, its reset too
		this.wall.set(DAY.plus(Duration.ofHours(20)).toEpochMilli());
		RateLimitDecision noon = this.limiter.consume(client("middle"), limits, Cost.tokens(1));
		assertThat(noon.allowed()).isFalse();
		assertThat(noon.statuses()).extracting(LimitStatus::remaining, LimitStatus::retryAfterMillis,
				LimitStatus::resetMillis)
			.containsExactly(tuple(0L, 4 * HOUR_MS, 4 * HOUR_MS));
	}

	@Test
	void twoInstancesTogetherAdmitAtMostTheQuotaTimesTheFractionLeft() {
		// 101 per fixed hour, counts starting a quarter into the hour: 101 * 0.75 = 75.75 over all instances
		PlanLimits limits = limits(LimitDefinition.quota("free-api-1h", 101, QuotaPeriod.fixed(Duration.ofHours(1))));
		this.wall.set(DAY.plus(Duration.ofMinutes(15)).toEpochMilli());
		LocalFallbackLimiter other = new LocalFallbackLimiter(1_000, this.instances::get, this.nanos::get,
				this.wall::get);
		assertThat(admitted(this.limiter, CLIENT, limits)).isEqualTo(37); // 37.875
		assertThat(admitted(other, CLIENT, limits)).isEqualTo(37);
		LocalFallbackLimiter alone = new LocalFallbackLimiter(1_000, () -> 1, this.nanos::get, this.wall::get);
		assertThat(admitted(alone, CLIENT, limits)).isEqualTo(75);
		LocalFallbackLimiter third = new LocalFallbackLimiter(1_000, () -> 3, this.nanos::get, this.wall::get);
		assertThat(admitted(third, CLIENT, limits)).isEqualTo(25);
	}

	@Test
	void aQuotasCountResetsAtThePeriodsEndWithTheWholeShare() {
		PlanLimits limits = limits(LimitDefinition.quota("free-api-1h", 100, QuotaPeriod.fixed(Duration.ofHours(1))));
		Instant halfway = DAY.plus(Duration.ofMinutes(30));
		assertThat(admittedAt(limits, halfway, "hash")).isEqualTo(25);
		assertThat(consume(limits).retryAfterMillis()).isEqualTo(HOUR_MS / 2);
		// no refill in the period, whatever time passes
		moveBoth(Duration.ofMillis(HOUR_MS / 2 - 1));
		RateLimitDecision last = consume(limits);
		assertThat(last.allowed()).isFalse();
		assertThat(last.retryAfterMillis()).isEqualTo(1);
		moveBoth(Duration.ofMillis(1)); // at the boundary: a new count, the whole period's share
		assertThat(admitted(this.limiter, CLIENT, limits)).isEqualTo(50);
		assertThat(consume(limits).retryAfterMillis()).isEqualTo(HOUR_MS);
		// a wall clock going back does not start another count
		this.wall.set(halfway.toEpochMilli());
		assertThat(consume(limits).allowed()).isFalse();
	}

	@Test
	void aQuotaIsNeverRefilledLikeABucketOfItsLongestPeriod() {
		// the quota's refill period is its longest length (27 h for a day): a bucket would regain tokens after 10 h
		LimitDefinition bucket = new LimitDefinition("free-api", 10, 10, Duration.ofHours(27));
		PlanLimits limits = limits(bucket, dailyQuota(8, ZoneOffset.UTC));
		assertThat(admitted(this.limiter, CLIENT, limits)).isEqualTo(4);
		moveBoth(Duration.ofHours(10));
		RateLimitDecision later = consume(limits);
		assertThat(later.allowed()).isFalse();
		assertThat(later.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-api-day");
		assertThat(later.statuses().get(0).remaining()).isEqualTo(2); // 1 + 10 h of 5 per 27 h, whole tokens
		assertThat(later.retryAfterMillis()).isEqualTo(14 * HOUR_MS);
	}

	@Test
	void aQuotasPeriodIsTheCalendarsInItsZone() {
		// March 2026 in Berlin lasts 31 days less an hour (summer time from the 29th); from the 16th 00:00 local
		// (15th 23:00Z), 16 days less an hour are left: floor(1000 * 1,378,800 s / (2 * 2,674,800 s)) = 257
		QuotaPeriod month = QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneId.of("Europe/Berlin"));
		PlanLimits limits = limits(LimitDefinition.quota("free-api-month", 1_000, month));
		assertThat(admittedAt(limits, Instant.parse("2026-03-15T23:00:00Z"), "berlin")).isEqualTo(257);
		assertThat(this.limiter.consume(client("berlin"), limits, Cost.tokens(1)).retryAfterMillis())
			.isEqualTo(Duration.ofDays(16).minusHours(1).toMillis());
	}

	@Test
	void aUsageQuotaIsReservedAndSettledInThePeriodItWasAdmittedIn() {
		PlanLimits limits = limits(dailyQuota(1_000, ZoneOffset.UTC).withUnit("tokens"));
		RateLimitDecision first = this.limiter.consume(CLIENT, limits, Cost.reserving(1, 300));
		assertThat(first.allowed()).isTrue();
		assertThat(first.statuses().get(0).remaining()).isEqualTo(200);
		first.reservation().settle(100); // 200 of the 300 back
		assertThat(this.limiter.consume(CLIENT, limits, Cost.NONE).statuses().get(0).remaining()).isEqualTo(400);
		RateLimitDecision second = this.limiter.consume(CLIENT, limits, Cost.reserving(1, 300));
		second.reservation().settle(700); // 400 more: the share owes 300
		RateLimitDecision owing = this.limiter.consume(CLIENT, limits, Cost.reserving(1, 1));
		assertThat(owing.allowed()).isFalse();
		assertThat(owing.retryAfterMillis()).isEqualTo(DAY_MS);
		ClientKey other = client("other");
		RateLimitDecision third = this.limiter.consume(other, limits, Cost.reserving(1, 300));
		assertThat(third.statuses().get(0).remaining()).isEqualTo(200);
		moveBoth(Duration.ofMinutes(23 * 60 + 30));
		assertThat(this.limiter.consume(other, limits, Cost.NONE).statuses().get(0).remaining()).isEqualTo(200);
		// the next day at 00:15: a new count (in buckets used within the hour), floor(500 * 23.75 / 24) = 494
		moveBoth(Duration.ofMinutes(45));
		assertThat(this.limiter.consume(other, limits, Cost.NONE).statuses().get(0).remaining()).isEqualTo(494);
		third.reservation().settle(600); // admitted yesterday: charges nothing to today's count
		assertThat(this.limiter.consume(other, limits, Cost.NONE).statuses().get(0).remaining()).isEqualTo(494);
	}

	@Test
	void aClientIdleForHoursKeepsItsQuotaCountUntilThePeriodEnds() {
		PlanLimits limits = limits(LimitDefinition.quota("free-api-month", 100,
				QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneOffset.UTC)));
		// 2026-12-05: 27 of December's 31 days left, floor(100 * 27 / 62) = 43
		assertThat(consume(limits).statuses().get(0).remaining()).isEqualTo(42);
		moveBoth(Duration.ofHours(5)); // buckets without a quota are dropped after an hour unused
		assertThat(consume(limits).statuses().get(0).remaining()).isEqualTo(41);
		assertThat(this.limiter.size()).isEqualTo(1);
		moveBoth(Duration.ofDays(27)); // past the month's end: dropped
		assertThat(this.limiter.size()).isZero();
	}

	@Test
	void aGlobalQuotaIsOneShareOfTheGroupForEveryClient() {
		// 60 per fixed hour for the whole group, over 2 instances, from the hour's start: 30 here, whoever asks
		LimitDefinition global = LimitDefinition.quota("api-1h", 60, QuotaPeriod.fixed(Duration.ofHours(1)))
			.withScope(LimitScope.GLOBAL);
		PlanLimits limits = limits(global);
		for (int i = 0; i < 30; i++) {
			assertThat(this.limiter.consume(client("c" + i), limits, Cost.tokens(1)).allowed()).as("client %d", i)
				.isTrue();
		}
		RateLimitDecision denied = this.limiter.consume(client("late"), limits, Cost.tokens(1));
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMillis()).isEqualTo(HOUR_MS);
	}

	private static LimitDefinition dailyQuota(long limit, ZoneId zone) {
		return LimitDefinition.quota("free-api-day", limit, QuotaPeriod.of(QuotaPeriodUnit.DAY, zone));
	}

	private static ClientKey client(String id) {
		return new ClientKey(ClientKey.Kind.API_KEY, id, "free");
	}

	/** Moves both clocks, the monotonic one and the wall clock, by the same time. */
	private void moveBoth(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
		this.wall.addAndGet(duration.toMillis());
	}

	/** The requests of cost 1 a new client is admitted with the wall clock at {@code at}, before its first denial. */
	private long admittedAt(PlanLimits limits, Instant at, String client) {
		this.wall.set(at.toEpochMilli());
		return admitted(this.limiter, client(client), limits);
	}

	/** Requests of cost 1 admitted until the first denial (at most 100,000). */
	private static long admitted(LocalFallbackLimiter limiter, ClientKey client, PlanLimits limits) {
		for (int i = 0; i < 100_000; i++) {
			if (!limiter.consume(client, limits, Cost.tokens(1)).allowed()) {
				return i;
			}
		}
		throw new AssertionError("never denied");
	}


	private static RateLimitDecision admitted(PlanLimits limits, HeldSlots slots) {
		return RateLimitDecision.shared(limits, true, List.of()).withSlots(slots);
	}

	/** Slots of the shared store, counting how each ended. */
	private static final class StoreSlots implements HeldSlots {

		final AtomicInteger released = new AtomicInteger();

		final AtomicInteger abandoned = new AtomicInteger();

		final AtomicInteger kept = new AtomicInteger();

		@Override
		public void release() {
			this.released.incrementAndGet();
		}

		@Override
		public void abandon() {
			this.abandoned.incrementAndGet();
		}

		@Override
		public void keep() {
			this.kept.incrementAndGet();
		}

	}

	private RateLimitDecision consume(PlanLimits limits) {
		return this.limiter.consume(CLIENT, limits, Cost.tokens(1));
	}

	private static PlanLimits limits(LimitDefinition... limits) {
		return new PlanLimits("free", "api", List.of(limits));
	}

}
