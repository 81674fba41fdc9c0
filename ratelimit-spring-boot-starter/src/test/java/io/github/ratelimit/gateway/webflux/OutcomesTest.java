package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.route.RateLimitOutcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/** The WebFlux front end's one adaptation of the handler's future, and where the handler finishes a request. */
class OutcomesTest {

	private static final RateLimitOutcome REFUSED = new RateLimitOutcome(new HttpHeaders(),
			io.github.ratelimit.gateway.chain.HeldSlots.NONE, RateLimitRefusal.clientUnidentified());

	private final ExecutorService requestLoop = Executors.newSingleThreadExecutor((r) -> new Thread(r, "request-loop"));

	@AfterEach
	void stop() {
		this.requestLoop.shutdownNow();
	}

	@Test
	void aTaskForTheRequestThreadRunsOnTheRequestsExecutor() {
		AtomicReference<String> thread = new AtomicReference<>();
		CompletableFuture<Void> ran = new CompletableFuture<>();
		new Thread(() -> Outcomes.requestThread(this.requestLoop).execute(() -> {
			thread.set(Thread.currentThread().getName());
			ran.complete(null);
		}), "redis-io").start();
		ran.join();
		assertThat(thread.get()).isEqualTo("request-loop");
	}

	@Test
	void anOutcomeAlreadyMadeIsEmittedOnTheCallingThread() {
		AtomicReference<String> thread = new AtomicReference<>();
		StepVerifier.create(Outcomes.toMono(CompletableFuture.completedFuture(REFUSED))
			.doOnNext((o) -> thread.set(Thread.currentThread().getName())))
			.expectNext(REFUSED)
			.verifyComplete();
		assertThat(thread.get()).isEqualTo(Thread.currentThread().getName());
	}

	@Test
	void anOutcomeMadeLaterIsEmitted() {
		CompletableFuture<RateLimitOutcome> pending = new CompletableFuture<>();
		StepVerifier.create(Outcomes.toMono(pending))
			.then(() -> new Thread(() -> pending.complete(REFUSED), "redis-io").start())
			.expectNext(REFUSED)
			.verifyComplete();
	}

	@Test
	void cancellingTheRequestCancelsTheOutcomeAndALateOneGivesItsSlotsBack() {
		CompletableFuture<RateLimitOutcome> pending = new CompletableFuture<>();
		StepVerifier.create(Outcomes.toMono(pending)).thenCancel().verify(Duration.ofSeconds(5));
		assertThat(pending.isCancelled()).isTrue();
		AtomicBoolean abandoned = new AtomicBoolean();
		RateLimitOutcome admitted = new RateLimitOutcome(new HttpHeaders(), () -> abandoned.set(true), null);
		CompletableFuture<RateLimitOutcome> uncancellable = new CompletableFuture<>() {
			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				return false;
			}
		};
		StepVerifier.create(Outcomes.toMono(uncancellable))
			.thenCancel()
			.verify(Duration.ofSeconds(5));
		uncancellable.complete(admitted);
		assertThat(abandoned).as("no one forwards it: the late outcome's slots go back").isTrue();
	}

}
