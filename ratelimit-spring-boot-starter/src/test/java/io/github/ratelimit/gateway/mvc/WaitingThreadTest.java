package io.github.ratelimit.gateway.mvc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** The Server MVC request thread as the executor of the handler's steps. */
class WaitingThreadTest {

	@Test
	void aTaskHandedOverWhileTheThreadWaitsRunsOnIt() throws Exception {
		WaitingThread requestThread = new WaitingThread();
		CompletableFuture<String> outcome = new CompletableFuture<>();
		AtomicReference<Thread> ranOn = new AtomicReference<>();
		new Thread(() -> requestThread.execute(() -> {
			ranOn.set(Thread.currentThread());
			outcome.complete("made");
		}), "redis-io").start();
		assertThat(requestThread.await(outcome, 5, TimeUnit.SECONDS)).isEqualTo("made");
		assertThat(ranOn.get()).isSameAs(Thread.currentThread());
	}

	@Test
	void anAnswerAlreadyMadeOrMadeElsewhereEndsTheWait() throws Exception {
		WaitingThread requestThread = new WaitingThread();
		assertThat(requestThread.await(CompletableFuture.completedFuture("made"), 5, TimeUnit.SECONDS))
			.isEqualTo("made");
		CompletableFuture<String> elsewhere = new CompletableFuture<>();
		new Thread(() -> elsewhere.complete("elsewhere"), "timer").start();
		assertThat(new WaitingThread().await(elsewhere, 5, TimeUnit.SECONDS)).isEqualTo("elsewhere");
	}

	@Test
	void aWaitWithoutAnswerCancelsTheFutureAndLaterTasksRunOnTheHandingThread() {
		WaitingThread requestThread = new WaitingThread();
		CompletableFuture<String> outcome = new CompletableFuture<>();
		assertThatExceptionOfType(TimeoutException.class)
			.isThrownBy(() -> requestThread.await(outcome, 10, TimeUnit.MILLISECONDS));
		assertThat(outcome).isCancelled();
		AtomicReference<Thread> ranOn = new AtomicReference<>();
		requestThread.execute(() -> ranOn.set(Thread.currentThread()));
		assertThat(ranOn.get()).isSameAs(Thread.currentThread());
	}

}
