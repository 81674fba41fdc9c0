package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The failure policy around the shared limiter. Every check runs under a timeout and a Resilience4j circuit breaker;
 * when it fails (error, timeout, breaker open):
 * <ul>
 * <li>critical routes fail closed: {@link RateLimitDecision#failedClosed} (the filter answers 503);</li>
 * <li>other routes fail open: the {@link LocalFallbackLimiter local fallback} decides with this instance's
 * share of each limit, or, with {@link FallbackMode#ALLOW}, the request is let through unchecked.</li>
 * </ul>
 * While the breaker is open no Redis call is made and a check costs a few microseconds; after
 * {@code wait-duration-in-open-state} trial calls go to Redis and, if they succeed, the breaker closes.
 */
public class FailurePolicyLimiter implements AutoCloseable {

	private static final AtomicIntegerFieldUpdater<PendingCheck> STATE = AtomicIntegerFieldUpdater
		.newUpdater(PendingCheck.class, "state");

	private static final Logger logger = LoggerFactory.getLogger(FailurePolicyLimiter.class);

	private final ClientRateLimiter shared;

	private final LocalFallbackLimiter local;

	private final CircuitBreaker circuitBreaker;

	private final Duration timeout;

	private final long timeoutNanos;

	private final Timer timer;

	private final FallbackMode mode;

	private final CheckListener metrics;

	private final OverLimitCache overLimit;

	private static final int PENDING = 0;

	private static final int ANSWERED = 1;

	private static final int ABANDONED = 2;

	private final AtomicLong nextLogAt = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong suppressed = new AtomicLong();

	/**
	 * Create the policy.
	 * @param shared the shared (Redis) limiter
	 * @param local the local fallback limiter
	 * @param circuitBreaker the breaker around the shared limiter
	 * @param timeout longest wait for the shared limiter per check
	 * @param mode what non-critical routes do while the shared limiter is unavailable
	 * @param metrics records check durations and store failures
	 * @param overLimit remembers denials until their Retry-After, or {@code null} to ask Redis every time
	 */
	public FailurePolicyLimiter(ClientRateLimiter shared, LocalFallbackLimiter local, CircuitBreaker circuitBreaker,
			Duration timeout, FallbackMode mode, CheckListener metrics, OverLimitCache overLimit) {
		this.shared = shared;
		this.local = local;
		this.circuitBreaker = circuitBreaker;
		this.timeout = timeout;
		this.timeoutNanos = timeout.toNanos();
		this.timer = newTimer(timeout);
		this.mode = mode;
		this.metrics = metrics;
		this.overLimit = overLimit;
	}

	/**
	 * Check and consume, applying the failure policy.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens the request takes
	 * @param critical whether the route fails closed
	 * @return the decision; never an error
	 */
	public Mono<RateLimitDecision> check(ClientKey client, PlanLimits limits, long cost, boolean critical) {
		return Mono.fromFuture(() -> checkAsync(client, limits, cost, critical, null));
	}

	/**
	 * Check and consume, applying the failure policy, and deliver the decision on the given executor (the request's
	 * event loop), so the rest of the request's processing runs there in parallel with other requests instead of on
	 * the single I/O thread of the Redis connection that delivered the answer.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens the request takes
	 * @param critical whether the route fails closed
	 * @param resumeOn where the decision is delivered when it is not decided on the calling thread; {@code null}
	 * for the thread that decided it
	 * @return the decision; never an error
	 */
	public Mono<RateLimitDecision> check(ClientKey client, PlanLimits limits, long cost, boolean critical,
			Executor resumeOn) {
		return Mono.fromFuture(() -> checkAsync(client, limits, cost, critical, resumeOn));
	}

	/**
	 * {@link #check} as a future, which the reactive form wraps. Cancelling the future abandons the check: if Redis
	 * still allows it, its tokens are refunded.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens the request takes
	 * @param critical whether the route fails closed
	 * @param resumeOn where the future is completed when the decision is not made on the calling thread;
	 * {@code null} for the thread that made it
	 * @return the decision; never completed exceptionally (failures become the fallback's decision)
	 */
	public CompletableFuture<RateLimitDecision> checkAsync(ClientKey client, PlanLimits limits, long cost,
			boolean critical, Executor resumeOn) {
		long start = System.nanoTime();
		if (this.overLimit != null) {
			RateLimitDecision remembered = this.overLimit.lookup(client, limits, cost, start);
			if (remembered != null) {
				this.metrics.recordCheck(remembered.source(), System.nanoTime() - start);
				return CompletableFuture.completedFuture(remembered);
			}
		}
		if (!this.circuitBreaker.tryAcquirePermission()) {
			return CompletableFuture.completedFuture(fallback(client, limits, cost, critical,
					CallNotPermittedException.createCallNotPermittedException(this.circuitBreaker), start));
		}
		PendingCheck pending = new PendingCheck(client, limits, cost, critical, start, resumeOn);
		CompletableFuture<RateLimitDecision> call;
		try {
			call = this.shared.tryConsumeAsync(client, limits, cost);
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		pending.timeout = this.timer.newTimeout(pending, this.timeoutNanos, TimeUnit.NANOSECONDS);
		call.whenComplete(pending);
		return pending;
	}

	/**
	 * Forget what this instance remembers about a client in a group (after its buckets were reset).
	 * @param client the client
	 * @param limits the plan's limits in the group
	 */
	public void forget(ClientKey client, PlanLimits limits) {
		if (this.overLimit != null) {
			this.overLimit.forget(client, limits);
		}
	}

	private RateLimitDecision fallback(ClientKey client, PlanLimits limits, long cost, boolean critical, Throwable ex,
			long start) {
		this.metrics.recordRedisError(ex);
		logFailure(limits.group(), ex, critical);
		RateLimitDecision decision;
		if (critical) {
			decision = RateLimitDecision.failedClosed(limits);
		}
		else if (this.mode == FallbackMode.ALLOW) {
			decision = RateLimitDecision.unavailable(limits);
		}
		else {
			decision = this.local.consume(client, limits, cost);
		}
		this.metrics.recordCheck(decision.source(), System.nanoTime() - start);
		return decision;
	}

	/**
	 * One check waiting for the shared limiter: completed by its answer or by the timer, whichever comes first.
	 * Giving up does not cancel the call (the command may already be in Redis); if it later comes back having
	 * allowed (and so consumed) the request, its tokens are refunded, so a request decided without Redis consumes
	 * nothing there. The circuit breaker is told of every outcome with the call's duration.
	 */
	private final class PendingCheck extends CompletableFuture<RateLimitDecision>
			implements TimerTask, BiConsumer<RateLimitDecision, Throwable> {

		private final ClientKey client;

		private final PlanLimits limits;

		private final long cost;

		private final boolean critical;

		private final long start;

		private final Executor resumeOn;

		volatile int state = PENDING;

		volatile Timeout timeout;

		PendingCheck(ClientKey client, PlanLimits limits, long cost, boolean critical, long start,
				Executor resumeOn) {
			this.client = client;
			this.limits = limits;
			this.cost = cost;
			this.critical = critical;
			this.start = start;
			this.resumeOn = resumeOn;
		}

		private void finish(RateLimitDecision decision) {
			Executor executor = this.resumeOn;
			if (executor == null || (executor instanceof EventExecutor loop && loop.inEventLoop())) {
				complete(decision);
				return;
			}
			try {
				executor.execute(() -> complete(decision));
			}
			catch (RuntimeException ex) { // e.g. the event loop is shutting down
				complete(decision);
			}
		}

		/** The shared limiter answered (on Lettuce's I/O thread). */
		@Override
		public void accept(RateLimitDecision decision, Throwable error) {
			if (STATE.compareAndSet(this, PENDING, ANSWERED)) {
				Timeout timer = this.timeout;
				if (timer != null) {
					timer.cancel();
				}
				long elapsed = System.nanoTime() - this.start;
				Throwable failure = (error != null) ? unwrap(error)
						: (decision == null) ? new IllegalStateException("The shared limiter answered nothing") : null;
				if (failure != null) {
					FailurePolicyLimiter.this.circuitBreaker.onError(elapsed, TimeUnit.NANOSECONDS, failure);
					finish(fallback(this.client, this.limits, this.cost, this.critical, failure, this.start));
					return;
				}
				FailurePolicyLimiter.this.circuitBreaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
				FailurePolicyLimiter.this.metrics.recordCheck(decision.source(), elapsed);
				if (FailurePolicyLimiter.this.overLimit != null && !decision.allowed()) {
					FailurePolicyLimiter.this.overLimit.remember(this.client, this.limits, this.cost, this.start,
							decision);
				}
				finish(decision);
			}
			else if (error == null && decision != null && decision.allowed() && this.cost > 0) {
				FailurePolicyLimiter.this.shared.refund(this.client, this.limits, this.cost)
					.subscribe(null, (ex) -> logger.debug("Refund of an abandoned check failed: {}", ex.toString()));
			}
		}

		/** The timeout elapsed (on a Reactor parallel thread, handed over by the timer). */
		@Override
		public void run(Timeout expired) {
			if (STATE.compareAndSet(this, PENDING, ABANDONED)) {
				TimeoutException failure = new TimeoutException(
						"No answer from the shared limiter within " + FailurePolicyLimiter.this.timeout);
				FailurePolicyLimiter.this.circuitBreaker.onError(System.nanoTime() - this.start, TimeUnit.NANOSECONDS,
						failure);
				finish(fallback(this.client, this.limits, this.cost, this.critical, failure, this.start));
			}
		}

		/** The caller gave up (e.g. the HTTP exchange was cancelled): an answer still to come is refunded. */
		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			if (STATE.compareAndSet(this, PENDING, ABANDONED)) {
				Timeout timer = this.timeout;
				if (timer != null) {
					timer.cancel();
				}
				FailurePolicyLimiter.this.circuitBreaker.releasePermission();
			}
			return super.cancel(mayInterruptIfRunning);
		}

	}

	private static Throwable unwrap(Throwable error) {
		Throwable cause = error;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	/**
	 * Stop the timer thread.
	 */
	@Override
	public void close() {
		this.timer.stop();
	}

	/**
	 * One timer wheel for every pending check (Netty's {@link HashedWheelTimer}: adding and cancelling a timeout is
	 * O(1), no scheduler queue per check), ticking every 1/20 of the timeout (1 ms to 10 ms), so a timeout fires
	 * within one tick after it is due. Expired checks are finished on Reactor's parallel scheduler, not on the
	 * timer's thread.
	 */
	private static Timer newTimer(Duration timeout) {
		long tickNanos = Math.max(1_000_000L, Math.min(10_000_000L, timeout.toNanos() / 20));
		ThreadFactory threads = (runnable) -> {
			Thread thread = new Thread(runnable, "ratelimit-timeouts");
			thread.setDaemon(true);
			return thread;
		};
		Executor finish = (task) -> Schedulers.parallel().schedule(task);
		return new HashedWheelTimer(threads, tickNanos, TimeUnit.NANOSECONDS, 512, true, -1, finish);
	}

	/**
	 * Forget every denial this instance remembers (after buckets were reset in bulk, e.g. a flushed Redis).
	 */
	public void forgetAll() {
		if (this.overLimit != null) {
			this.overLimit.clear();
		}
	}

	/**
	 * The circuit breaker around the shared limiter.
	 * @return the breaker
	 */
	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	/**
	 * How non-critical routes are limited while the shared limiter is unavailable.
	 * @return the fallback mode
	 */
	public FallbackMode getMode() {
		return this.mode;
	}

	/** Log at WARN at most once per 10 s, with the number of failures not logged in between. */
	private void logFailure(String group, Throwable error, boolean critical) {
		long now = System.nanoTime();
		long next = this.nextLogAt.get();
		if ((next == Long.MIN_VALUE || now - next >= 0) && this.nextLogAt.compareAndSet(next, now + 10_000_000_000L)) {
			long skipped = this.suppressed.getAndSet(0);
			String reason = (error instanceof CallNotPermittedException) ? "circuit breaker open" : error.toString();
			logger.warn("Rate limiter unavailable ({}); group '{}' {}{}", reason, group,
					critical ? "fails closed (503)" : (this.mode == FallbackMode.ALLOW) ? "lets requests through"
							: "uses the local fallback limiter",
					(skipped > 0) ? " (" + skipped + " similar failures not logged)" : "");
		}
		else {
			this.suppressed.incrementAndGet();
		}
	}

}
