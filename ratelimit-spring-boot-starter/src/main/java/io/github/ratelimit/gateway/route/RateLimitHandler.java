package io.github.ratelimit.gateway.route;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.chain.LimiterChain;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.RateLimitRequest;
import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.ClientKeyResolver;
import io.github.ratelimit.gateway.client.ClientRequest;
import io.github.ratelimit.gateway.client.ClientResolution;
import io.github.ratelimit.gateway.http.RateLimitHeaders;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.DenialLog;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.protection.UpstreamPermit;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The request path of a rate limited route, the same for every front end: client key (plan decided by the
 * {@link ClientKeyResolver}) -> limits -> the limiter chain -> decision -> metrics and denial log -> the
 * {@link RateLimitOutcome} the front end writes as HTTP. One call per request ({@link #handle}).
 */
public final class RateLimitHandler {

	private final LimitResolver limitResolver;

	private final ClientKeyResolver clientKeyResolver;

	private final LimiterChain chain;

	private final RateLimitMetrics metrics;

	private final RateLimitHeaders headers;

	private final boolean shadowHeaders;

	private final long failClosedRetryAfterSeconds;

	private final DenialLog denialLog;

	private final RouteUsageReports usageReports;

	private final UpstreamAdmission admission;

	/**
	 * Create the request path of routes without upstream protection.
	 * @param properties the validated {@code ratelimit.*} properties
	 * @param limitResolver finds the limits of a plan in a group
	 * @param clientKeyResolver identifies the client of a request
	 * @param chain the limiter chain (its outermost layer): checks and consumes tokens, applying the failure policy
	 * @param metrics observes decisions
	 */
	public RateLimitHandler(RateLimitProperties properties, LimitResolver limitResolver,
			ClientKeyResolver clientKeyResolver, LimiterChain chain, RateLimitMetrics metrics) {
		this(properties, limitResolver, clientKeyResolver, chain, metrics, UpstreamProtections.NONE);
	}

	/**
	 * Create the request path.
	 * @param properties the validated {@code ratelimit.*} properties
	 * @param limitResolver finds the limits of a plan in a group
	 * @param clientKeyResolver identifies the client of a request
	 * @param chain the limiter chain (its outermost layer): checks and consumes tokens, applying the failure policy
	 * @param metrics observes decisions and sheds
	 * @param protections the priority of each plan's requests in the routes' upstream protections
	 */
	public RateLimitHandler(RateLimitProperties properties, LimitResolver limitResolver,
			ClientKeyResolver clientKeyResolver, LimiterChain chain, RateLimitMetrics metrics,
			UpstreamProtections protections) {
		this.limitResolver = limitResolver;
		this.clientKeyResolver = clientKeyResolver;
		this.chain = chain;
		this.metrics = metrics;
		this.headers = new RateLimitHeaders(properties.getHeaderStyle());
		this.shadowHeaders = properties.isShadowHeaders();
		this.failClosedRetryAfterSeconds = RateLimitHeaders
			.retryAfterSeconds(properties.getCircuitBreaker().getWaitDurationInOpenState().toMillis());
		this.denialLog = new DenialLog(properties.getDenialLogLevel(), properties.getDenialLogInterval());
		this.usageReports = new RouteUsageReports(metrics);
		this.admission = new UpstreamAdmission(protections, metrics, this.denialLog);
	}

	/**
	 * Decide one request of a route: identify its client, check it through the chain, observe the decision (metrics,
	 * denial log) and say what to answer. Shadow routes always forward.
	 * @param request the request, with the principal when the route limits by principal
	 * @param route the route's settings
	 * @param requestThread where the outcome is made when the decision arrives later (on another thread): the
	 * request's own thread or event loop; a decision already made is turned into the outcome on the calling thread
	 * @return the outcome: forward (with the header fields and the slots held, counted in
	 * {@code ratelimit.requests.in.flight} until they are ended), or a refusal (400 client not identified or
	 * ambiguous, 429 denied, 503 limiter unavailable on a route that fails closed); completed exceptionally only
	 * when the {@link ClientKeyResolver}, the limiter chain or a step of this handler throws (the chain's failure
	 * policy answers Redis failures with a decision). Cancelling it abandons the check: tokens and slots an answer
	 * still to come takes are given back.
	 */
	public CompletableFuture<RateLimitOutcome> handle(ClientRequest request, RouteLimitSettings route,
			Executor requestThread) {
		return handle(request, route, requestThread, null);
	}

	/**
	 * Decide one request of a route that reserves what its JSON body says ({@code reserve: json:<path>}), as
	 * {@link #handle(ClientRequest, RouteLimitSettings, Executor)} does.
	 * @param request the request, with the principal when the route limits by principal
	 * @param route the route's settings
	 * @param requestThread where the outcome is made when the decision arrives later
	 * @param body the request body's value at the route's {@code reserve} path, as the front end read it; {@code null}
	 * when the route reserves otherwise (or the body could not be read: the request reserves {@code reserve-max})
	 * @return the outcome, as {@link #handle(ClientRequest, RouteLimitSettings, Executor)}
	 */
	public CompletableFuture<RateLimitOutcome> handle(ClientRequest request, RouteLimitSettings route,
			Executor requestThread, @Nullable UsageReading body) {
		CompletableFuture<RateLimitOutcome> outcome = new CompletableFuture<>();
		CompletableFuture<ClientResolution> client = this.clientKeyResolver
			.resolve(request, route.keyBy(), route.header())
			.toCompletableFuture();
		then(client, requestThread, outcome, (resolution, error) -> {
			if (error != null) {
				outcome.completeExceptionally(unwrap(error));
			}
			else if (!outcome.isDone()) {
				check(resolution, route, requestThread, outcome, request, body);
			}
		});
		return outcome;
	}

	private void check(ClientResolution resolution, RouteLimitSettings route, Executor requestThread,
			CompletableFuture<RateLimitOutcome> outcome, ClientRequest request, @Nullable UsageReading body) {
		ClientKey client = resolution.client();
		if (client == null) { // not identified
			String ambiguity = resolution.ambiguity();
			outcome.complete(RateLimitOutcome.refused((ambiguity != null)
					? RateLimitRefusal.ambiguousClient(ambiguity) : RateLimitRefusal.clientUnidentified()));
			return;
		}
		UpstreamPermit permit = this.admission.admit(client, route);
		if (permit == null) {
			outcome.complete(RateLimitOutcome.refused(this.admission.shed(client, route)));
			return;
		}
		outcome.whenComplete((made, error) -> {
			if (error != null) { // cancelled, or a step threw: nobody forwards the request
				permit.release();
			}
		});
		PlanLimits limits = this.limitResolver.limitsFor(client.plan(), route.group());
		Cost cost = route.usage().settles()
				? Cost.reserving(route.cost(), limits.hasUsageLimits() ? route.usage().reservation(request, body) : 0)
				: Cost.tokens(route.cost());
		CompletableFuture<RateLimitDecision> checked = this.chain
			.check(new RateLimitRequest(client, limits, cost, route.failsClosed()));
		outcome.whenComplete((ignored, error) -> {
			if (outcome.isCancelled()) {
				checked.cancel(false);
			}
		});
		then(checked, requestThread, outcome, (decision, error) -> {
			if (outcome.isDone()) { // cancelled: nobody forwards the request
				permit.release();
				if (decision != null) {
					decision.slots().abandon();
					decision.reservation().cancel();
				}
				return;
			}
			if (error != null) {
				permit.release();
				outcome.completeExceptionally(unwrap(error));
				return;
			}
			RateLimitOutcome made = enforce(client, route, decision, cost, permit);
			if (!outcome.complete(made)) {
				made.abandon();
			}
		});
	}

	/**
	 * Run a step when a future completes: at once when it is done, else on the request's thread; a step that throws
	 * completes the outcome with its exception.
	 */
	private static <T> void then(CompletableFuture<T> future, Executor requestThread,
			CompletableFuture<RateLimitOutcome> outcome, BiConsumer<? super T, ? super Throwable> step) {
		BiConsumer<T, Throwable> guarded = (value, error) -> {
			try {
				step.accept(value, error);
			}
			catch (RuntimeException | Error ex) {
				outcome.completeExceptionally(ex);
			}
		};
		if (future.isDone()) {
			future.whenComplete(guarded);
		}
		else {
			future.whenCompleteAsync(guarded, requestThread);
		}
	}

	private static Throwable unwrap(Throwable error) {
		return (error instanceof CompletionException && error.getCause() != null) ? error.getCause() : error;
	}

	/** Observe a decision (metrics; denial log) and say what the front end does with the request. */
	private RateLimitOutcome enforce(ClientKey client, RouteLimitSettings route, RateLimitDecision decision,
			Cost cost, UpstreamPermit permit) {
		this.metrics.recordDecision(route.routeId(), route.group(), decision, route.shadow());
		this.metrics.recordQuotaCrossings(route.group(), decision, cost);
		if (!decision.allowed()) {
			this.denialLog.denied(client, route.routeId(), route.group(), decision, route.shadow(),
					decision.isFailedClosed() ? this.failClosedRetryAfterSeconds * 1000 : decision.retryAfterMillis());
		}
		boolean writesHeaders = !route.shadow() || this.shadowHeaders;
		HttpHeaders fields = new HttpHeaders();
		if (writesHeaders) {
			this.headers.write(decision, fields);
		}
		HttpHeaders readOnly = HttpHeaders.readOnlyHttpHeaders(fields);
		if (route.shadow() || decision.allowed()) {
			HeldSlots slots = hold(route, decision);
			if (permit == UpstreamPermit.NONE) {
				return new RateLimitOutcome(readOnly, slots, null, meter(route, decision));
			}
			permit.forwarded();
			return new RateLimitOutcome(readOnly, HeldSlots.andThen(slots, permit::release), null,
					meter(route, decision), permit);
		}
		permit.release();
		RateLimitRefusal refusal = decision.isFailedClosed()
				? RateLimitRefusal.limiterUnavailable(decision, this.failClosedRetryAfterSeconds)
				: RateLimitRefusal.quotaExceeded(decision, RateLimitHeaders.retryAfterSeconds(decision.retryAfterMillis()));
		return new RateLimitOutcome(readOnly, HeldSlots.NONE, refusal);
	}

	/** The meter of an admitted request whose answer settles what it reserved. */
	private UsageMeter meter(RouteLimitSettings route, RateLimitDecision decision) {
		if (!route.usage().settles() || decision.reservation() == Reservation.NONE) {
			return UsageMeter.NONE;
		}
		UsageMeter.UsageReports reports = this.usageReports.of(route, decision.limits());
		if (route.usage().usage() != null) {
			reports.admitted(decision.reservation().reserved());
		}
		return new UsageMeter(route.usage(), decision.reservation(), reports);
	}

	/** The slots an admitted request holds, counted in {@code ratelimit.requests.in.flight} until they are ended. */
	private HeldSlots hold(RouteLimitSettings route, RateLimitDecision decision) {
		HeldSlots slots = decision.slots();
		if (slots == HeldSlots.NONE) {
			return HeldSlots.NONE;
		}
		return HeldSlots.andThen(slots, this.metrics.recordInFlight(route.group()));
	}

	/**
	 * The refusal of a request the limiter cannot decide (no decision in time, or a route whose arguments do not fit
	 * the limits): 503 with the circuit breaker's wait in the open state as {@code Retry-After}.
	 * @return the outcome
	 */
	public RateLimitOutcome limiterUnavailable() {
		return RateLimitOutcome.refused(new RateLimitRefusal(RateLimitRefusal.Reason.LIMITER_UNAVAILABLE,
				this.failClosedRetryAfterSeconds, List.of(), null,
				"The rate limiter is unavailable and this route fails closed; retry later."));
	}

	@Override
	public String toString() {
		return "RateLimitHandler[" + this.chain + "]";
	}

}
