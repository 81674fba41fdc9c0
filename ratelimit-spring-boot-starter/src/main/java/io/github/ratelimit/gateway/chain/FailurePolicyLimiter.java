package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;

import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.support.ThrottledLog;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failure policy around the shared limiter. Every check has one deadline ({@code ratelimit.redis-timeout}, from
 * the check's start); when the check fails (error, deadline passed, or the {@linkplain ShardCircuitBreakers circuit
 * breaker} of the store shard holding the client's buckets is open):
 * <ul>
 * <li>requests that {@linkplain RateLimitRequest#failClosed() fail closed} (critical routes) get
 * {@link RateLimitDecision#failedClosed}, which the front end answers with 503;</li>
 * <li>the others fail open: the {@link LocalFallbackLimiter local fallback} decides with this instance's share of
 * each limit, or, with {@link FallbackMode#ALLOW}, the request is let through unchecked.</li>
 * </ul>
 * When the deadline passes, the breakers record the store calls still out as failed first, then the policy decides.
 * A check abandoned (deadline or cancellation) that the store later allows is refunded. This is the only place where
 * the fail-closed rule is applied.
 */
final class FailurePolicyLimiter implements LimiterChain, AutoCloseable {

	private static final AtomicIntegerFieldUpdater<PendingCheck> STATE = AtomicIntegerFieldUpdater
		.newUpdater(PendingCheck.class, "state");

	private static final Logger logger = LoggerFactory.getLogger(FailurePolicyLimiter.class);

	private static final int PENDING = 0;

	private static final int ANSWERED = 1;

	private static final int ABANDONED = 2;

	private final StoreLayer shared;

	private final LocalFallbackLimiter local;

	private final Deadlines deadlines;

	private final FallbackMode mode;

	private final CheckListener listener;

	private final ThrottledLog failures = new ThrottledLog(Duration.ofSeconds(10));

	/**
	 * Create the policy with deadlines of its own (tests).
	 * @param shared the shared limiter; a breaker's refusal ({@link CallNotPermittedException}) is a failure like any
	 * other
	 * @param local the local fallback limiter
	 * @param timeout longest wait for the shared limiter per check (positive)
	 * @param mode what requests that fail open get while the shared limiter is unavailable
	 * @param listener told of check durations and store failures ({@link CheckListener#NONE} for nobody)
	 */
	FailurePolicyLimiter(RateLimitStore shared, LocalFallbackLimiter local, Duration timeout, FallbackMode mode,
			CheckListener listener) {
		this(shared, local, new Deadlines(timeout), mode, listener);
	}

	/**
	 * Create the policy.
	 * @param shared the shared limiter (the scopes over the store, guarded by its shards' breakers)
	 * @param local the local fallback limiter
	 * @param deadlines one per check; closed with this policy
	 * @param mode what requests that fail open get while the shared limiter is unavailable
	 * @param listener told of check durations and store failures
	 */
	FailurePolicyLimiter(RateLimitStore shared, LocalFallbackLimiter local, Deadlines deadlines, FallbackMode mode,
			CheckListener listener) {
		this.shared = StoreLayer.of(shared);
		this.local = local;
		this.deadlines = deadlines;
		this.mode = mode;
		this.listener = listener;
	}

	/**
	 * {@inheritDoc}
	 * <p>The future completes on the thread that decided: the caller's (breaker open), Redis' I/O thread (an answer)
	 * or a pool thread (the deadline). Cancelling it abandons the check: if Redis still allows it, its tokens are
	 * refunded and its slots released.
	 */
	@Override
	public CompletableFuture<RateLimitDecision> check(RateLimitRequest request) {
		return check(request, System.nanoTime());
	}

	/**
	 * Decide a request whose check started earlier (in a layer in front of this one).
	 * @param request the request
	 * @param startNanos {@link System#nanoTime()} when the check started: its deadline and its duration count from
	 * there
	 * @return the decision, never completed exceptionally
	 */
	CompletableFuture<RateLimitDecision> check(RateLimitRequest request, long startNanos) {
		Deadline deadline = this.deadlines.startedAt(startNanos);
		PendingCheck pending = new PendingCheck(request, deadline);
		CompletableFuture<RateLimitDecision> call = Futures
			.call(() -> this.shared.tryConsume(deadline, request.client(), request.limits(), request.cost()));
		if (!call.isDone()) { // not refused at once by an open breaker
			deadline.schedule(pending);
		}
		call.whenComplete(pending);
		return pending;
	}

	/**
	 * The deadlines of this policy's checks (shared with the breakers, for their calls outside a check).
	 * @return the deadlines
	 */
	Deadlines deadlines() {
		return this.deadlines;
	}

	private RateLimitDecision fallback(RateLimitRequest request, Throwable ex, long start) {
		PlanLimits limits = request.limits();
		this.listener.recordRedisError(ex);
		logFailure(limits.group(), ex, request.failClosed());
		RateLimitDecision decision;
		if (request.failClosed()) {
			decision = RateLimitDecision.failedClosed(limits);
		}
		else if (this.mode == FallbackMode.ALLOW) {
			decision = RateLimitDecision.unavailable(limits);
		}
		else {
			decision = this.local.consume(request.client(), limits, request.cost());
		}
		this.listener.recordCheck(decision.source(), System.nanoTime() - start);
		return decision;
	}

	/**
	 * An allowed decision of the shared limiter whose slots also count against the local fallback's share while the
	 * request is in flight, so that a fallback decision never admits more than this instance's share on top of them.
	 */
	private RateLimitDecision countedLocally(RateLimitDecision decision, RateLimitRequest request) {
		if (this.mode != FallbackMode.LOCAL || request.failClosed()) {
			return decision;
		}
		return this.local.countStoreSlots(request.client(), request.cost(), decision);
	}

	private void refundAbandoned(RateLimitRequest request) {
		Futures.call(() -> this.shared.refund(request.client(), request.limits(), request.cost()))
			.whenComplete((ignored, ex) -> {
				if (ex != null) {
					logger.debug("Refund of an abandoned check failed: {}", Futures.unwrap(ex).toString());
				}
			});
	}

	/**
	 * One check waiting for the shared limiter: completed by its answer or when its deadline passes, whichever comes
	 * first. Giving up does not cancel the call (the command may already be in Redis); if it later comes back having
	 * allowed (and so consumed) the request, its tokens are refunded and its concurrency slots released, so a request
	 * decided without Redis consumes nothing there.
	 */
	private final class PendingCheck extends CompletableFuture<RateLimitDecision>
			implements Runnable, BiConsumer<RateLimitDecision, Throwable> {

		private final RateLimitRequest request;

		private final Deadline deadline;

		volatile int state = PENDING;

		PendingCheck(RateLimitRequest request, Deadline deadline) {
			this.request = request;
			this.deadline = deadline;
		}

		/** The shared limiter answered (on Lettuce's I/O thread). */
		@Override
		public void accept(RateLimitDecision decision, Throwable error) {
			this.deadline.cancel();
			if (STATE.compareAndSet(this, PENDING, ANSWERED)) {
				long elapsed = this.deadline.elapsedNanos();
				Throwable failure = (error != null) ? Futures.unwrap(error)
						: (decision == null) ? new IllegalStateException("The shared limiter answered nothing") : null;
				if (failure != null) {
					settle(fallback(this.request, failure, this.deadline.startNanos()), false);
					return;
				}
				FailurePolicyLimiter.this.listener.recordCheck(decision.source(), elapsed);
				settle(countedLocally(decision, this.request), true);
			}
			else if (error == null && decision != null && decision.allowed()) {
				giveBack(decision);
			}
		}

		/**
		 * Complete with a decision; if the caller cancelled meanwhile (between the state change and this), what the
		 * decision took is given back: its slots, and the tokens of a shared store's allowed check.
		 */
		private void settle(RateLimitDecision decision, boolean shared) {
			if (!complete(decision) && decision.allowed()) {
				if (shared) {
					giveBack(decision);
				}
				else {
					decision.slots().abandon();
				}
			}
		}

		/** An allowed answer nobody will use: its slots back, and its tokens refunded. */
		private void giveBack(RateLimitDecision decision) {
			decision.slots().abandon();
			if (!this.request.cost().isNone()) {
				refundAbandoned(this.request);
			}
		}

		/**
		 * The deadline passed (on a pool thread, after the breakers recorded the calls still out as failed).
		 */
		@Override
		public void run() {
			if (STATE.compareAndSet(this, PENDING, ABANDONED)) {
				settle(fallback(this.request, this.deadline.timeoutException("the shared limiter"),
						this.deadline.startNanos()), false);
			}
		}

		/**
		 * The caller gave up (e.g. the HTTP exchange was cancelled): an answer still to come is refunded. The deadline
		 * keeps running, so that the breakers still record a call that never answers.
		 */
		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			STATE.compareAndSet(this, PENDING, ABANDONED);
			return super.cancel(mayInterruptIfRunning);
		}

	}

	/**
	 * Stop the deadlines' timer thread.
	 */
	@Override
	public void close() {
		this.deadlines.close();
	}

	/**
	 * How requests that fail open are limited while the shared limiter is unavailable.
	 * @return the fallback mode
	 */
	FallbackMode getMode() {
		return this.mode;
	}

	/**
	 * The local fallback limiter.
	 * @return the fallback
	 */
	LocalFallbackLimiter local() {
		return this.local;
	}

	/** Log at WARN at most once per 10 s, with the number of failures not logged in between. */
	private void logFailure(String group, Throwable error, boolean failClosed) {
		this.failures.log((skipped) -> {
			String reason = (error instanceof CallNotPermittedException) ? "circuit breaker open" : error.toString();
			logger.warn("Rate limiter unavailable ({}); group '{}' {}{}", reason, group,
					failClosed ? "fails closed (503)" : (this.mode == FallbackMode.ALLOW) ? "lets requests through"
							: "uses the local fallback limiter",
					(skipped > 0) ? " (" + skipped + " similar failures not logged)" : "");
		});
	}

}
