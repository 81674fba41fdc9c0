package io.github.ratelimit.gateway.metrics;

import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The crossing arithmetic of {@code ratelimit.quota.crossings} ({@link RateLimitMetrics#crossesQuotaThreshold}) and
 * which decisions {@link MicrometerRateLimitMetrics} counts.
 */
class QuotaCrossingsTest {

	private static final QuotaPeriod MONTH = QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneOffset.UTC);

	private static final LimitDefinition QUOTA = LimitDefinition.quota("free-search-month", 10, MONTH);

	private static final LimitDefinition BUCKET = new LimitDefinition("free-search", 10, 10, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("free", "search", List.of(BUCKET, QUOTA));

	@Test
	void thresholdCountsAreRoundedUp() {
		assertThat(RateLimitMetrics.quotaThresholdCount(10, 80)).isEqualTo(8);
		assertThat(RateLimitMetrics.quotaThresholdCount(10, 100)).isEqualTo(10);
		assertThat(RateLimitMetrics.quotaThresholdCount(3, 80)).isEqualTo(3); // 2.4
		assertThat(RateLimitMetrics.quotaThresholdCount(1, 80)).isEqualTo(1); // 0.8
		assertThat(RateLimitMetrics.quotaThresholdCount(6, 80)).isEqualTo(5); // 4.8
		assertThat(RateLimitMetrics.quotaThresholdCount(100_000, 80)).isEqualTo(80_000);
		assertThat(RateLimitMetrics.quotaThresholdCount(100_001, 80)).isEqualTo(80_001); // 80,000.8
		assertThat(RateLimitMetrics.quotaThresholdCount(1L << 53, 80)).isEqualTo(7_205_759_403_792_794L); // 0.4 up
		assertThat(RateLimitMetrics.quotaThresholdCount(1L << 53, 100)).isEqualTo(1L << 53);
	}

	@Test
	void aRequestCrossesAThresholdWhenItsCostMovesTheUsedCountFromBelowItToAtOrAboveIt() {
		// limit 10: 80% is 8
		assertThat(crossing(10, 6, 7)).containsExactly(false, false);
		assertThat(crossing(10, 7, 8)).containsExactly(true, false);
		assertThat(crossing(10, 8, 9)).containsExactly(false, false);
		assertThat(crossing(10, 9, 10)).containsExactly(false, true);
		assertThat(crossing(10, 6, 9)).containsExactly(true, false); // a cost of 3
		assertThat(crossing(10, 7, 10)).containsExactly(true, true);
		assertThat(crossing(10, 8, 10)).containsExactly(false, true);
		assertThat(crossing(10, 0, 10)).containsExactly(true, true); // e.g. a usage reservation filling it
		assertThat(crossing(10, 8, 8)).containsExactly(false, false); // a cost of 0 moves nothing
		assertThat(crossing(10, 10, 10)).containsExactly(false, false);
		// capacity 1: 0 -> 1 crosses both; capacity 3: 80% is ceil(2.4) = 3, so 2 -> 3 crosses both
		assertThat(crossing(1, 0, 1)).containsExactly(true, true);
		assertThat(crossing(3, 2, 3)).containsExactly(true, true);
		assertThat(crossing(3, 1, 2)).containsExactly(false, false);
		// in terms of the decision: remaining after the request, and what it took
		assertThat(RateLimitMetrics.crossesQuotaThreshold(10, 2, 1, 80)).isTrue(); // 7 -> 8
		assertThat(RateLimitMetrics.crossesQuotaThreshold(10, 1, 1, 80)).isFalse(); // 8 -> 9
		assertThat(RateLimitMetrics.crossesQuotaThreshold(10, 0, 1, 100)).isTrue(); // 9 -> 10
		// a cost of 5 from 6 (to 11) is denied by the script: a denial counts nothing (denialsAndDecisions...)
	}

	@Test
	void admissionsOfTheSharedStoreCountEachCrossingWithThePolicyGroupPlanAndThreshold() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		MicrometerRateLimitMetrics metrics = new MicrometerRateLimitMetrics(registry);
		for (long used = 1; used <= 10; used++) {
			metrics.recordQuotaCrossings("search", shared(true, 10 - used), Cost.ONE);
		}
		assertThat(crossings(registry, "80")).isEqualTo(1);
		assertThat(crossings(registry, "100")).isEqualTo(1);
		assertThat(registry.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS).counters()).hasSize(2);
		Counter eighty = registry.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS).tag("threshold", "80").counter();
		assertThat(eighty.getId().getTags()).extracting((t) -> t.getKey() + "=" + t.getValue())
			.containsExactlyInAnyOrder("group=search", "plan=free", "policy=free-search-month", "threshold=80");
	}

	@Test
	void denialsAndDecisionsNotOfTheSharedStoreCountNothing() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		MicrometerRateLimitMetrics metrics = new MicrometerRateLimitMetrics(registry);
		// a denial took nothing, even where the remaining count is one a crossing would leave
		metrics.recordQuotaCrossings("search", shared(false, 0), Cost.ONE);
		metrics.recordQuotaCrossings("search", shared(false, 2), Cost.ONE);
		for (RateLimitDecision.Source source : List.of(RateLimitDecision.Source.CACHED,
				RateLimitDecision.Source.LEASED, RateLimitDecision.Source.LOCAL_FALLBACK)) {
			metrics.recordQuotaCrossings("search", new RateLimitDecision(LIMITS, true,
					List.of(new LimitStatus(BUCKET, true, 9, 0, 100), new LimitStatus(QUOTA, true, 2, 0, 1000)), source),
					Cost.ONE);
		}
		metrics.recordQuotaCrossings("search", RateLimitDecision.unavailable(LIMITS), Cost.ONE);
		assertThat(registry.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS).counters()).isEmpty();
	}

	@Test
	void aQuotaCountingUsageCrossesByTheRequestsReservation() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		MicrometerRateLimitMetrics metrics = new MicrometerRateLimitMetrics(registry);
		LimitDefinition tokens = LimitDefinition.quota("free-chat-tokens-month", 1000, MONTH).withUnit("tokens");
		PlanLimits limits = new PlanLimits("free", "chat", List.of(QUOTA.withPolicyName("free-chat-month"), tokens));
		// one request (1 of 10 requests: 7 -> 8, crosses 80) reserving 300 tokens (600 -> 900: crosses 80 too)
		metrics.recordQuotaCrossings("chat", RateLimitDecision.shared(limits, true,
				List.of(new LimitStatus(limits.limits().get(0), true, 2, 0, 1000),
						new LimitStatus(tokens, true, 100, 0, 1000))),
				Cost.reserving(1, 300));
		// the next reserving 100 (900 -> 1000) crosses 100 of the token quota only (8 -> 9 requests)
		metrics.recordQuotaCrossings("chat", RateLimitDecision.shared(limits, true,
				List.of(new LimitStatus(limits.limits().get(0), true, 1, 0, 1000),
						new LimitStatus(tokens, true, 0, 0, 1000))),
				Cost.reserving(1, 100));
		assertThat(crossings(registry, "free-chat-month", "80")).isEqualTo(1);
		assertThat(crossings(registry, "free-chat-tokens-month", "80")).isEqualTo(1);
		assertThat(crossings(registry, "free-chat-tokens-month", "100")).isEqualTo(1);
		assertThat(registry.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS).counters()).hasSize(4);
		assertThat(crossings(registry, "free-chat-month", "100")).isZero();
	}

	/** Whether [80%, 100%] is crossed by a request that moved the used count of a quota from one count to another. */
	private static boolean[] crossing(long limit, long usedBefore, long usedAfter) {
		long remaining = limit - usedAfter;
		long taken = usedAfter - usedBefore;
		return new boolean[] { RateLimitMetrics.crossesQuotaThreshold(limit, remaining, taken, 80),
				RateLimitMetrics.crossesQuotaThreshold(limit, remaining, taken, 100) };
	}

	/** An allowed or denied decision of the shared store: the token bucket had tokens, the quota this many left. */
	private static RateLimitDecision shared(boolean allowed, long quotaRemaining) {
		return RateLimitDecision.shared(LIMITS, allowed, List.of(new LimitStatus(BUCKET, true, 9, 0, 100),
				new LimitStatus(QUOTA, allowed, quotaRemaining, allowed ? 0 : 5000, 5000)));
	}

	private static double crossings(SimpleMeterRegistry registry, String threshold) {
		return crossings(registry, "free-search-month", threshold);
	}

	private static double crossings(SimpleMeterRegistry registry, String policy, String threshold) {
		Counter counter = registry.find(MicrometerRateLimitMetrics.QUOTA_CROSSINGS)
			.tag("policy", policy)
			.tag("threshold", threshold)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
