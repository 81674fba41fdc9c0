package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/** The WebFlux front end's one adaptation of the chain's future. */
class DecisionsTest {

	private static final LimitDefinition LIMIT = new LimitDefinition("anonymous-api", 10, 10, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("anonymous", "api", List.of(LIMIT));

	private static final RateLimitDecision ALLOWED = RateLimitDecision.shared(LIMITS, true,
			List.of(new LimitStatus(LIMIT, true, 9, 0, 100)));

	private final ExecutorService requestLoop = Executors.newSingleThreadExecutor((r) -> new Thread(r, "request-loop"));

	@AfterEach
	void stop() {
		this.requestLoop.shutdownNow();
	}

	@Test
	void aDecisionAnsweredOnAnotherThreadIsDeliveredOnTheRequestsExecutor() {
		// answered after the subscription, on another thread (Redis' I/O thread)
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		AtomicReference<String> thread = new AtomicReference<>();
		StepVerifier.create(Decisions.onRequestThread(answer, this.requestLoop)
			.doOnNext((d) -> thread.set(Thread.currentThread().getName())))
			.then(() -> new Thread(() -> answer.complete(ALLOWED), "redis-io").start())
			.assertNext((d) -> assertThat(d.source()).isEqualTo(RateLimitDecision.Source.SHARED))
			.verifyComplete();
		assertThat(thread.get()).isEqualTo("request-loop");
	}

	@Test
	void aDecisionAlreadyMadeIsEmittedOnTheCallingThread() {
		AtomicReference<String> thread = new AtomicReference<>();
		StepVerifier.create(Decisions.onRequestThread(CompletableFuture.completedFuture(ALLOWED), this.requestLoop)
			.doOnNext((d) -> thread.set(Thread.currentThread().getName())))
			.expectNext(ALLOWED)
			.verifyComplete();
		assertThat(thread.get()).isEqualTo(Thread.currentThread().getName());
	}

	@Test
	void cancellingTheRequestCancelsTheCheck() {
		CompletableFuture<RateLimitDecision> pending = new CompletableFuture<>();
		StepVerifier.create(Decisions.onRequestThread(pending, this.requestLoop)).thenCancel().verify(Duration.ofSeconds(5));
		assertThat(pending.isCancelled()).isTrue();
	}

}
