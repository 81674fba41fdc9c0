package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The failure policy, with the shared limiter replaced by stubs (pure logic; Redis itself is tested elsewhere). */
class FailurePolicyLimiterTest {

	private static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "anonymous");

	private static final LimitDefinition LIMIT = new LimitDefinition("anonymous-api", 10, 10, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("anonymous", "api", List.of(LIMIT));

	private final AtomicInteger calls = new AtomicInteger();

	private final CircuitBreaker breaker = CircuitBreaker.of("test", CircuitBreakerConfig.custom()
		.slidingWindowSize(4)
		.minimumNumberOfCalls(2)
		.failureRateThreshold(50)
		.waitDurationInOpenState(Duration.ofMinutes(1))
		.build());

	@Test
	void sharedDecisionPassesThrough() {
		FailurePolicyLimiter limiter = limiter(counting(Mono.just(RateLimitDecision.shared(LIMITS, true,
				List.of(new LimitStatus(LIMIT, true, 9, 0, 100))))), FallbackMode.LOCAL);
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false))
			.assertNext((d) -> assertThat(d.source()).isEqualTo(RateLimitDecision.Source.SHARED))
			.verifyComplete();
	}

	@Test
	void errorFallsBackLocallyOrFailsClosedOnCriticalRoutes() {
		FailurePolicyLimiter limiter = limiter(counting(Mono.error(new IllegalStateException("down"))),
				FallbackMode.LOCAL);
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false))
			.assertNext((d) -> {
				assertThat(d.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
				assertThat(d.allowed()).isTrue();
			})
			.verifyComplete();
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, true))
			.assertNext((d) -> {
				assertThat(d.source()).isEqualTo(RateLimitDecision.Source.NONE);
				assertThat(d.allowed()).isFalse();
			})
			.verifyComplete();
	}

	@Test
	void allowModeLetsRequestsThroughUnchecked() {
		FailurePolicyLimiter limiter = limiter(counting(Mono.error(new IllegalStateException("down"))),
				FallbackMode.ALLOW);
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false))
			.assertNext((d) -> assertThat(d).isEqualTo(RateLimitDecision.unavailable(LIMITS)))
			.verifyComplete();
	}

	@Test
	void timeoutCountsAsFailure() {
		FailurePolicyLimiter limiter = limiter(counting(Mono.never()), FallbackMode.LOCAL);
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false))
			.assertNext((d) -> assertThat(d.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK))
			.verifyComplete();
		assertThat(this.breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
	}

	@Test
	void openBreakerMakesNoCallToTheSharedLimiter() {
		FailurePolicyLimiter limiter = limiter(counting(Mono.error(new IllegalStateException("down"))),
				FallbackMode.LOCAL);
		for (int i = 0; i < 10; i++) {
			limiter.check(CLIENT, LIMITS, 1, false).block();
		}
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.calls.get()).isEqualTo(2);
	}

	@Test
	void anAbandonedCheckThatLaterAllowedIsRefunded() {
		AtomicInteger refunds = new AtomicInteger();
		RateLimitDecision allowed = RateLimitDecision.shared(LIMITS, true, List.of(new LimitStatus(LIMIT, true, 9, 0, 100)));
		RateLimitDecision denied = RateLimitDecision.shared(LIMITS, false, List.of(new LimitStatus(LIMIT, false, 0, 100, 1000)));
		ClientRateLimiter slow = new ClientRateLimiter() {
			@Override
			public Mono<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost) {
				return Mono.delay(Duration.ofMillis(200)).thenReturn((cost == 1) ? allowed : denied);
			}

			@Override
			public Mono<Void> refund(ClientKey client, PlanLimits limits, long cost) {
				return Mono.fromRunnable(refunds::incrementAndGet);
			}
		};
		FailurePolicyLimiter limiter = limiter(slow, FallbackMode.LOCAL);
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false))
			.assertNext((d) -> assertThat(d.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK))
			.verifyComplete();
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(refunds.get()).isEqualTo(1));
		// a late denial consumed nothing: nothing to refund
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 2, false)).expectNextCount(1).verifyComplete();
		StepVerifier.create(Mono.delay(Duration.ofMillis(400))).expectNextCount(1).verifyComplete();
		assertThat(refunds.get()).isEqualTo(1);
	}

	@Test
	void aCancelledCheckThatLaterAllowedIsRefundedAndReleasesItsTrialPermission() {
		AtomicInteger refunds = new AtomicInteger();
		reactor.core.publisher.Sinks.One<RateLimitDecision> answer = reactor.core.publisher.Sinks.one();
		ClientRateLimiter pending = new ClientRateLimiter() {
			@Override
			public Mono<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost) {
				FailurePolicyLimiterTest.this.calls.incrementAndGet();
				return answer.asMono();
			}

			@Override
			public Mono<Void> refund(ClientKey client, PlanLimits limits, long cost) {
				return Mono.fromRunnable(refunds::incrementAndGet);
			}
		};
		CircuitBreaker oneTrial = CircuitBreaker.of("one-trial", CircuitBreakerConfig.custom()
			.permittedNumberOfCallsInHalfOpenState(1)
			.waitDurationInOpenState(Duration.ofMinutes(1))
			.build());
		FailurePolicyLimiter limiter = new FailurePolicyLimiter(pending, new LocalFallbackLimiter(100, () -> 1),
				oneTrial, Duration.ofMinutes(1), FallbackMode.LOCAL,
				io.github.ratelimit.gateway.metrics.RateLimitMetrics.NONE, null);
		this.limiters.add(limiter);
		oneTrial.transitionToOpenState();
		oneTrial.transitionToHalfOpenState(); // one trial call at a time
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false)).thenCancel().verify(Duration.ofSeconds(5));
		assertThat(this.calls.get()).isEqualTo(1);
		// the cancelled trial gave its permission back: the next check is a trial call again, not refused
		StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false)).thenCancel().verify(Duration.ofSeconds(5));
		assertThat(this.calls.get()).isEqualTo(2);
		answer.tryEmitValue(RateLimitDecision.shared(LIMITS, true, List.of(new LimitStatus(LIMIT, true, 9, 0, 100))));
		// both abandoned checks were allowed by the late answer: both refunded
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(refunds.get()).isEqualTo(2));
	}

	@Test
	void aDecisionAnsweredOnAnotherThreadIsDeliveredOnTheRequestsExecutor() {
		java.util.concurrent.ExecutorService requestLoop = java.util.concurrent.Executors
			.newSingleThreadExecutor((r) -> new Thread(r, "request-loop"));
		try {
			// answered 20 ms later on a parallel thread (Redis latency), well within a 10 s timeout
			FailurePolicyLimiter limiter = new FailurePolicyLimiter(
					counting(Mono.delay(Duration.ofMillis(20)).thenReturn(RateLimitDecision.shared(LIMITS, true,
							List.of(new LimitStatus(LIMIT, true, 9, 0, 100))))),
					new LocalFallbackLimiter(100, () -> 1), this.breaker, Duration.ofSeconds(10), FallbackMode.LOCAL,
					io.github.ratelimit.gateway.metrics.RateLimitMetrics.NONE, null);
			this.limiters.add(limiter);
			java.util.concurrent.atomic.AtomicReference<String> thread = new java.util.concurrent.atomic.AtomicReference<>();
			StepVerifier.create(limiter.check(CLIENT, LIMITS, 1, false, requestLoop)
				.doOnNext((d) -> thread.set(Thread.currentThread().getName())))
				.assertNext((d) -> assertThat(d.source()).isEqualTo(RateLimitDecision.Source.SHARED))
				.verifyComplete();
			assertThat(thread.get()).isEqualTo("request-loop");
		}
		finally {
			requestLoop.shutdownNow();
		}
	}

	@org.junit.jupiter.api.AfterEach
	void closeLimiters() {
		this.limiters.forEach(FailurePolicyLimiter::close);
	}

	private final List<FailurePolicyLimiter> limiters = new java.util.ArrayList<>();

	private ClientRateLimiter counting(Mono<RateLimitDecision> result) {
		return (client, limits, cost) -> Mono.defer(() -> {
			this.calls.incrementAndGet();
			return result;
		});
	}

	private FailurePolicyLimiter limiter(ClientRateLimiter shared, FallbackMode mode) {
		FailurePolicyLimiter limiter = new FailurePolicyLimiter(shared, new LocalFallbackLimiter(100, () -> 1),
				this.breaker, Duration.ofMillis(50), mode, io.github.ratelimit.gateway.metrics.RateLimitMetrics.NONE,
				null);
		this.limiters.add(limiter);
		return limiter;
	}

}
