package io.github.ratelimit.gateway.resilience;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.config.RateLimitProperties.FallbackMode;
import io.github.ratelimit.gateway.key.ClientKey;
import io.github.ratelimit.gateway.limit.PlanLimits;
import io.github.ratelimit.gateway.limiter.ClientRateLimiter;
import io.github.ratelimit.gateway.limiter.RateLimitDecision;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The failure policy around the shared limiter. Every check runs under a timeout and a Resilience4j circuit breaker;
 * when it fails (error, timeout, breaker open):
 * <ul>
 * <li>critical routes fail closed: {@link RateLimitDecision#failedClosed} (the filter answers 503);</li>
 * <li>other routes fail open: the {@link LocalTokenBucketLimiter local fallback} decides with this instance's
 * share of each limit, or, with {@link FallbackMode#ALLOW}, the request is let through unchecked.</li>
 * </ul>
 * While the breaker is open no Redis call is made and a check costs a few microseconds; after
 * {@code wait-duration-in-open-state} trial calls go to Redis and, if they succeed, the breaker closes.
 */
public class ResilientRateLimiter {

	private static final Logger logger = LoggerFactory.getLogger(ResilientRateLimiter.class);

	private final ClientRateLimiter shared;

	private final LocalTokenBucketLimiter local;

	private final CircuitBreaker circuitBreaker;

	private final Duration timeout;

	private final FallbackMode mode;

	private final RateLimitMetrics metrics;

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
	public ResilientRateLimiter(ClientRateLimiter shared, LocalTokenBucketLimiter local, CircuitBreaker circuitBreaker,
			Duration timeout, FallbackMode mode, RateLimitMetrics metrics, OverLimitCache overLimit) {
		this.shared = shared;
		this.local = local;
		this.circuitBreaker = circuitBreaker;
		this.timeout = timeout;
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
		return Mono.defer(() -> {
			long start = System.nanoTime();
			RateLimitDecision remembered = (this.overLimit != null) ? this.overLimit.lookup(client, limits, cost, start)
					: null;
			if (remembered != null) {
				this.metrics.recordCheck(remembered.source(), System.nanoTime() - start);
				return Mono.just(remembered);
			}
			return decide(client, limits, cost, critical).doOnNext((decision) -> {
				this.metrics.recordCheck(decision.source(), System.nanoTime() - start);
				if (this.overLimit != null && !decision.allowed()) {
					this.overLimit.remember(client, limits, cost, start, decision);
				}
			});
		});
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

	private Mono<RateLimitDecision> decide(ClientKey client, PlanLimits limits, long cost, boolean critical) {
		return Mono.defer(() -> withTimeout(client, limits, cost))
			.transformDeferred(CircuitBreakerOperator.of(this.circuitBreaker))
			.onErrorResume((ex) -> {
				this.metrics.recordRedisError(ex);
				logFailure(limits.group(), ex, critical);
				if (critical) {
					return Mono.just(RateLimitDecision.failedClosed(limits));
				}
				if (this.mode == FallbackMode.ALLOW) {
					return Mono.just(RateLimitDecision.unavailable(limits));
				}
				return Mono.just(this.local.consume(client, limits, cost));
			});
	}

	/**
	 * Ask the shared limiter, giving up after the timeout. Unlike {@link Mono#timeout}, giving up does not cancel
	 * the call: the command may already be in Redis, and if it later comes back having allowed (and so consumed)
	 * the request, its tokens are refunded, so a request decided without Redis consumes nothing there.
	 */
	private Mono<RateLimitDecision> withTimeout(ClientKey client, PlanLimits limits, long cost) {
		return Mono.create((sink) -> {
			AtomicInteger state = new AtomicInteger(PENDING);
			Disposable timer = Mono.delay(this.timeout).subscribe((tick) -> {
				if (state.compareAndSet(PENDING, ABANDONED)) {
					sink.error(new TimeoutException("No answer from the shared limiter within " + this.timeout));
				}
			});
			sink.onCancel(() -> state.compareAndSet(PENDING, ABANDONED));
			sink.onDispose(timer);
			this.shared.tryConsume(client, limits, cost).subscribe((decision) -> {
				if (state.compareAndSet(PENDING, ANSWERED)) {
					sink.success(decision);
				}
				else if (decision.allowed() && cost > 0) {
					this.shared.refund(client, limits, cost)
						.subscribe(null, (ex) -> logger.debug("Refund of an abandoned check failed: {}", ex.toString()));
				}
			}, (ex) -> {
				if (state.compareAndSet(PENDING, ANSWERED)) {
					sink.error(ex);
				}
			}, () -> {
				if (state.compareAndSet(PENDING, ANSWERED)) {
					sink.error(new IllegalStateException("The shared limiter answered nothing"));
				}
			});
		});
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
