package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failure policy over a store guarded by its breaker, with the store replaced by stubs (pure logic; Redis itself
 * is tested elsewhere).
 */
class FailurePolicyLimiterTest {

	private static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "anonymous");

	private static final LimitDefinition LIMIT = new LimitDefinition("anonymous-api", 10, 10, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("anonymous", "api", List.of(LIMIT));

	private static final RateLimitDecision ALLOWED = RateLimitDecision.shared(LIMITS, true,
			List.of(new LimitStatus(LIMIT, true, 9, 0, 100)));

	private final AtomicInteger calls = new AtomicInteger();

	private final List<FailurePolicyLimiter> limiters = new ArrayList<>();

	private final ShardCircuitBreakers breakers = new ShardCircuitBreakers(null, CircuitBreakerRegistry.ofDefaults(),
			"test", CircuitBreakerConfig.custom()
				.slidingWindowSize(4)
				.minimumNumberOfCalls(2)
				.failureRateThreshold(50)
				.waitDurationInOpenState(Duration.ofMinutes(1))
				.build(),
			Duration.ofMillis(50));

	private final CircuitBreaker breaker = this.breakers.breaker(StoreShards.SINGLE_SHARD);

	@Test
	void sharedDecisionPassesThrough() {
		FailurePolicyLimiter limiter = limiter(counting(() -> CompletableFuture.completedFuture(ALLOWED)),
				FallbackMode.LOCAL);
		assertThat(decide(limiter, 1, false).source()).isEqualTo(RateLimitDecision.Source.SHARED);
	}

	@Test
	void errorFallsBackLocallyOrFailsClosedOnCriticalRoutes() {
		FailurePolicyLimiter limiter = limiter(failing(), FallbackMode.LOCAL);
		RateLimitDecision local = decide(limiter, 1, false);
		assertThat(local.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		assertThat(local.allowed()).isTrue();
		RateLimitDecision closed = decide(limiter, 1, true);
		assertThat(closed.source()).isEqualTo(RateLimitDecision.Source.NONE);
		assertThat(closed.allowed()).isFalse();
		assertThat(closed.isFailedClosed()).isTrue();
		assertThat(local.isFailedClosed()).isFalse();
	}

	@Test
	void allowModeLetsRequestsThroughUnchecked() {
		FailurePolicyLimiter limiter = limiter(failing(), FallbackMode.ALLOW);
		assertThat(decide(limiter, 1, false)).isEqualTo(RateLimitDecision.unavailable(LIMITS));
	}

	@Test
	void timeoutFallsBackAndCountsAsFailureOfTheShard() {
		FailurePolicyLimiter limiter = limiter(counting(CompletableFuture::new), FallbackMode.LOCAL);
		assertThat(decide(limiter, 1, false).source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		// one deadline per check: the shard's breaker counted the call as failed when it passed, before the fallback
		// decided
		assertThat(this.breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
	}

	@Test
	void openBreakerMakesNoCallToTheSharedLimiter() {
		FailurePolicyLimiter limiter = limiter(failing(), FallbackMode.LOCAL);
		for (int i = 0; i < 10; i++) {
			decide(limiter, 1, false);
		}
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.calls.get()).isEqualTo(2);
	}

	@Test
	void anAbandonedCheckThatLaterAllowedIsRefunded() {
		AtomicInteger refunds = new AtomicInteger();
		RateLimitDecision denied = RateLimitDecision.shared(LIMITS, false,
				List.of(new LimitStatus(LIMIT, false, 0, 100, 1000)));
		List<CompletableFuture<RateLimitDecision>> late = new ArrayList<>();
		RateLimitStore slow = new RateLimitStore() {
			@Override
			public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
				CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
				late.add(answer);
				return answer;
			}

			@Override
			public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
				refunds.incrementAndGet();
				return CompletableFuture.completedFuture(null);
			}
		};
		FailurePolicyLimiter limiter = limiter(slow, FallbackMode.LOCAL);
		assertThat(decide(limiter, 1, false).source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		late.get(0).complete(ALLOWED); // runs the policy's callback on this thread before returning
		assertThat(refunds.get()).isEqualTo(1);
		// a late denial consumed nothing: nothing to refund
		assertThat(decide(limiter, 2, false).source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		late.get(1).complete(denied);
		assertThat(refunds.get()).isEqualTo(1);
	}

	@Test
	void aCancelledCheckThatLaterAllowedIsRefunded() {
		AtomicInteger refunds = new AtomicInteger();
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		RateLimitStore pending = new RateLimitStore() {
			@Override
			public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
				FailurePolicyLimiterTest.this.calls.incrementAndGet();
				return answer;
			}

			@Override
			public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
				refunds.incrementAndGet();
				return CompletableFuture.completedFuture(null);
			}
		};
		FailurePolicyLimiter limiter = new FailurePolicyLimiter(pending, new LocalFallbackLimiter(100, () -> 1),
				Duration.ofMinutes(1), FallbackMode.LOCAL, CheckListener.NONE);
		this.limiters.add(limiter);
		assertThat(limiter.check(new RateLimitRequest(CLIENT, LIMITS, 1, false)).cancel(false)).isTrue();
		assertThat(limiter.check(new RateLimitRequest(CLIENT, LIMITS, 1, false)).cancel(false)).isTrue();
		assertThat(this.calls.get()).isEqualTo(2);
		answer.complete(ALLOWED);
		// both abandoned checks were allowed by the late answer: both refunded
		assertThat(refunds.get()).isEqualTo(2);
	}

	@AfterEach
	void closeLimiters() {
		this.limiters.forEach(FailurePolicyLimiter::close);
		this.breakers.close();
	}

	private static RateLimitDecision decide(FailurePolicyLimiter limiter, long cost, boolean failClosed) {
		return limiter.check(new RateLimitRequest(CLIENT, LIMITS, cost, failClosed)).orTimeout(30, TimeUnit.SECONDS)
			.join();
	}

	private RateLimitStore failing() {
		return counting(() -> CompletableFuture.failedFuture(new IllegalStateException("down")));
	}

	private RateLimitStore counting(Supplier<CompletableFuture<RateLimitDecision>> result) {
		return (client, limits, cost) -> {
			this.calls.incrementAndGet();
			return result.get();
		};
	}

	private FailurePolicyLimiter limiter(RateLimitStore shared, FallbackMode mode) {
		FailurePolicyLimiter limiter = new FailurePolicyLimiter(this.breakers.guard(shared),
				new LocalFallbackLimiter(100, () -> 1), Duration.ofMillis(50), mode, CheckListener.NONE);
		this.limiters.add(limiter);
		return limiter;
	}

}
