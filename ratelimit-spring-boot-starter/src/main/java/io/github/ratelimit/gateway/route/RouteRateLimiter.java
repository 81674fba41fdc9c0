package io.github.ratelimit.gateway.route;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.chain.RateLimitChecker;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.RateLimitRequest;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.ClientKeyResolver;
import io.github.ratelimit.gateway.client.ClientRequest;
import io.github.ratelimit.gateway.client.ClientResolution;
import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.http.RateLimitHeaders;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.DenialLog;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The request path of a rate limited route, the same for every front end, one way: client key (plan decided by the
 * {@link ClientKeyResolver}) -> limits -> the limiter chain -> decision -> metrics and denial log -> what to answer.
 * A front end (the WebFlux {@code RateLimit} gateway filter, the Server MVC {@code rateLimit} filter function)
 * calls {@link #client}, then {@link #check}, then {@link #enforce}, adapting the chain's future once, and writes
 * the {@link RouteOutcome} as HTTP; an admitted request's concurrency slots are held through {@link #hold} until its
 * response is over.
 */
public final class RouteRateLimiter {

	private final RateLimitProperties properties;

	private final LimitResolver limitResolver;

	private final ClientKeyResolver clientKeyResolver;

	private final RateLimitChecker checker;

	private final RateLimitMetrics metrics;

	private final RateLimitHeaders headers;

	private final long failClosedRetryAfterSeconds;

	private final DenialLog denialLog;

	private final Map<String, RouteLimitSettings> routes = new ConcurrentHashMap<>();

	private final PrincipalRoutesNotice principalRoutesNotice = new PrincipalRoutesNotice(
			RouteRateLimiter.class.getClassLoader());

	/**
	 * Create the request path.
	 * @param properties the validated {@code ratelimit.*} properties
	 * @param limitResolver finds the limits of a plan in a group
	 * @param clientKeyResolver identifies the client of a request
	 * @param checker the limiter chain (its outermost layer): checks and consumes tokens, applying the failure policy
	 * @param metrics observes decisions
	 */
	public RouteRateLimiter(RateLimitProperties properties, LimitResolver limitResolver,
			ClientKeyResolver clientKeyResolver, RateLimitChecker checker, RateLimitMetrics metrics) {
		this.properties = properties;
		this.limitResolver = limitResolver;
		this.clientKeyResolver = clientKeyResolver;
		this.checker = checker;
		this.metrics = metrics;
		this.headers = new RateLimitHeaders(properties.getHeaderStyle());
		this.failClosedRetryAfterSeconds = RateLimitHeaders
			.retryAfterSeconds(properties.getCircuitBreaker().getWaitDurationInOpenState().toMillis());
		this.denialLog = new DenialLog(properties.getDenialLogLevel(), properties.getDenialLogInterval());
	}

	/**
	 * Resolve and check one route's arguments against the limits in force, and remember the route (for the
	 * actuator endpoint).
	 * @param routeId the route id, or {@code null} when the route has none (then the group names it)
	 * @param arguments the route's {@code RateLimit} arguments
	 * @return the route's settings
	 * @throws RateLimitConfigurationException if the route has neither group nor id, the group is unknown, the cost
	 * exceeds a capacity, or the {@code header} argument is missing with {@code key-by: header}, given with another
	 * {@code key-by} or no header name
	 */
	public RouteLimitSettings settings(@Nullable String routeId, RateLimitArguments arguments) {
		List<ConfigurationViolation> violations = violations(routeId, arguments);
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		KeyBy keyBy = (arguments.getKeyBy() != null) ? arguments.getKeyBy() : KeyBy.API_KEY;
		long cost = (arguments.getCost() != null) ? arguments.getCost() : 1L;
		String group = (arguments.getGroup() != null && !arguments.getGroup().isBlank()) ? arguments.getGroup()
				: routeId;
		boolean critical = (arguments.getCritical() != null) ? arguments.getCritical()
				: this.limitResolver.isCriticalGroup(group);
		boolean shadow = (arguments.getShadow() != null) ? arguments.getShadow()
				: this.limitResolver.isShadowGroup(group);
		String id = (routeId != null) ? routeId : group;
		String header = (keyBy == KeyBy.HEADER) ? arguments.getHeader().strip() : null;
		RouteLimitSettings settings = new RouteLimitSettings(id, group, keyBy, header, cost, critical, shadow);
		this.routes.put(id, settings);
		if (keyBy == KeyBy.PRINCIPAL) {
			this.principalRoutesNotice.keyedByPrincipal(id);
		}
		return settings;
	}

	/**
	 * Check one route's arguments against the limits in force (validated), not the live properties, which a
	 * refresh may have made invalid; see {@link RouteArgumentRules#validateFilter}.
	 * @param routeId the route id, or {@code null} when the route has none (or it is not known yet)
	 * @param arguments the route's {@code RateLimit} arguments
	 * @return the problems found, each naming the route and the argument; empty when valid
	 */
	public List<ConfigurationViolation> violations(@Nullable String routeId, RateLimitArguments arguments) {
		KeyBy keyBy = (arguments.getKeyBy() != null) ? arguments.getKeyBy() : KeyBy.API_KEY;
		long cost = (arguments.getCost() != null) ? arguments.getCost() : 1L;
		return RouteArgumentRules.validateFilter(this.limitResolver.effectiveProperties(), routeId,
				arguments.getGroup(), keyBy, arguments.getHeader(), cost);
	}

	/**
	 * The limits in force, as one object that a reload replaces: a front end that keeps a route's settings resolves
	 * them again when this changes (a group's {@code critical} or {@code shadow} may have changed).
	 * @return the validated properties in force; compared by identity
	 */
	public Object limitsInForce() {
		return this.limitResolver.effectiveProperties();
	}

	/**
	 * How long clients of a route that fails closed are told to wait while the limiter is unavailable: the circuit
	 * breaker's wait in the open state, in whole seconds.
	 * @return the {@code Retry-After} of a 503, at least 1
	 */
	public long failClosedRetryAfterSeconds() {
		return this.failClosedRetryAfterSeconds;
	}

	/**
	 * The resolved settings of every route built so far, by route id.
	 * @return an unmodifiable snapshot
	 */
	public Map<String, RouteLimitSettings> routeSettings() {
		return Map.copyOf(this.routes);
	}

	/**
	 * Identify the client of a request.
	 * @param request the request
	 * @param route the route's settings
	 * @return as {@link ClientKeyResolver#resolve(ClientRequest, KeyBy, String)}: the client, not identified
	 * (answer {@link RateLimitRefusal#clientUnidentified()}), or ambiguous (answer
	 * {@link RateLimitRefusal#ambiguousClient})
	 */
	public CompletionStage<ClientResolution> client(ClientRequest request, RouteLimitSettings route) {
		return this.clientKeyResolver.resolve(request, route.keyBy(), route.header());
	}

	/**
	 * Check a request of an identified client against its plan's limits in the route's group, through the chain.
	 * @param client the client
	 * @param route the route's settings
	 * @return the decision, never completed exceptionally (the chain's failure policy answers every failure)
	 */
	public CompletableFuture<RateLimitDecision> check(ClientKey client, RouteLimitSettings route) {
		PlanLimits limits = this.limitResolver.limitsFor(client.plan(), route.group());
		return this.checker.check(new RateLimitRequest(client, limits, route.cost(), route.failsClosed()));
	}

	/**
	 * Observe a decision (metrics; denial log) and say what the front end does with the request: forward it, or
	 * answer 429 (denied) or 503 (limiter unavailable on a route that fails closed). Shadow routes always forward.
	 * @param client the client
	 * @param route the route's settings
	 * @param decision the chain's decision
	 * @return the outcome
	 */
	public RouteOutcome enforce(ClientKey client, RouteLimitSettings route, RateLimitDecision decision) {
		this.metrics.recordDecision(route.routeId(), route.group(), decision, route.shadow());
		if (!decision.allowed()) {
			this.denialLog.denied(client, route.routeId(), route.group(), decision, route.shadow());
		}
		if (route.shadow()) {
			return new RouteOutcome(decision, this.properties.isShadowHeaders(), null);
		}
		if (decision.allowed()) {
			return new RouteOutcome(decision, true, null);
		}
		if (decision.isFailedClosed()) {
			return new RouteOutcome(decision, true,
					RateLimitRefusal.limiterUnavailable(decision, this.failClosedRetryAfterSeconds));
		}
		long retryAfter = RateLimitHeaders.retryAfterSeconds(decision.retryAfterMillis());
		return new RouteOutcome(decision, true, RateLimitRefusal.quotaExceeded(decision, retryAfter));
	}

	/**
	 * Write an outcome's rate limit header fields, if it has any to write.
	 * @param outcome the outcome
	 * @param responseHeaders the response's headers, not yet committed
	 */
	public void writeHeaders(RouteOutcome outcome, HttpHeaders responseHeaders) {
		if (outcome.writesHeaders()) {
			this.headers.write(outcome.decision(), responseHeaders);
		}
	}

	/**
	 * The concurrency slots an admitted request holds, counted in {@code ratelimit.requests.in.flight} until its
	 * exchange is over. The front end ends them once, when the exchange is over: released or kept, see
	 * {@link HeldSlots}.
	 * @param route the route's settings
	 * @param outcome an admitted outcome
	 * @return the slots, ended at most once; {@link HeldSlots#NONE} when the request holds none
	 */
	public HeldSlots hold(RouteLimitSettings route, RouteOutcome outcome) {
		HeldSlots slots = outcome.decision().slots();
		if (slots == HeldSlots.NONE) {
			return HeldSlots.NONE;
		}
		return HeldSlots.andThen(slots, this.metrics.recordInFlight(route.group()));
	}

	@Override
	public String toString() {
		return "RouteRateLimiter[" + this.routes.size() + " routes, " + this.checker + "]";
	}

}
