package io.github.ratelimit.gateway.mvc;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.ClientResolution;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import io.github.ratelimit.gateway.route.RouteOutcome;
import io.github.ratelimit.gateway.route.RouteRateLimiter;
import io.github.ratelimit.gateway.support.ThrottledLog;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.http.HttpHeaders;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The Server MVC front end of the limiter: runs the {@link RouteRateLimiter}'s request path for the
 * {@code RateLimit} filters of Server MVC routes ({@link RateLimitFilterFunctions}) and writes its outcome as a
 * {@link ServerResponse}. Allowed requests go upstream with the rate limit header fields; refused ones are answered
 * by the {@link RateLimitServletResponseWriter} (429, 503, 400), exactly as on WebFlux.
 *
 * <p>The request's thread identifies the client (waiting only when its plan must be looked up), calls the chain,
 * and waits for the chain's future, which the chain's failure policy completes within {@code ratelimit.redis-timeout}
 * (with the local fallback's decision, or fail-closed); the waits are plain {@link CompletableFuture#get}s, which park
 * a virtual thread ({@code spring.threads.virtual.enabled}) without pinning its carrier. The decision's meters, the
 * denial log and the answer are made on the request's thread too. As a safety net against a replaced bean whose
 * future never completes, the waits end after {@value #ANSWER_WAIT_SECONDS} s in all: the route then fails closed
 * (503) or lets the request through, as the failure policy would, and a decision that arrives later gives its
 * concurrency slots back.
 *
 * <p>Once the application context has started it checks the arguments of every {@code RateLimit} filter built
 * while it started that names a group, and stops start-up with a {@link RateLimitConfigurationException} if one does
 * not fit the limits.
 */
public class ServerMvcRateLimiter implements SmartInitializingSingleton, ApplicationContextAware {

	/** Longest wait for the chain's answer, in seconds: far beyond its own timeout, a safety net only. */
	static final long ANSWER_WAIT_SECONDS = 30;

	private static final Logger logger = LoggerFactory.getLogger(ServerMvcRateLimiter.class);

	/** Start of the request attributes holding an attempt's slots, by route and group. */
	private static final String ATTEMPT_SLOTS_ATTRIBUTE = ServerMvcRateLimiter.class.getName() + ".slots.";

	private final @Nullable RouteRateLimiter limiter;

	private final RateLimitServletResponseWriter responseWriter;

	private final @Nullable ServerMvcRouteValidator configuredRoutes;

	private final ThrottledLog unanswered = new ThrottledLog(Duration.ofSeconds(10));

	private final ThrottledLog misconfigured = new ThrottledLog(Duration.ofSeconds(10));

	/** When this front end's application context started, in milliseconds since the epoch; 0 when unknown. */
	private long contextStartedAt;

	/**
	 * Create the front end.
	 * @param limiter the request path shared by the front ends
	 * @param responseWriter writes the answers to refused requests
	 * @param configuredRoutes knows the {@code RateLimit} filters of the configured routes, made known to the limiter
	 * at start-up; {@code null} for none
	 */
	public ServerMvcRateLimiter(RouteRateLimiter limiter, RateLimitServletResponseWriter responseWriter,
			@Nullable ServerMvcRouteValidator configuredRoutes) {
		this.limiter = limiter;
		this.responseWriter = responseWriter;
		this.configuredRoutes = configuredRoutes;
	}

	private ServerMvcRateLimiter() {
		this.limiter = null;
		this.configuredRoutes = null;
		this.responseWriter = (request, response, refusal) -> {
		};
	}

	/**
	 * The front end with the starter switched off ({@code ratelimit.enabled=false}): every {@code RateLimit} filter
	 * lets every request pass; one WARN at start-up names the filters.
	 * @return the switched-off front end
	 */
	public static ServerMvcRateLimiter disabled() {
		return new ServerMvcRateLimiter();
	}

	/**
	 * Limit one request of a route.
	 * @param request the request
	 * @param next the rest of the route
	 * @param filter the route's filter, with its arguments
	 * @return the upstream's response with the rate limit header fields, or the refusal
	 * @throws Exception what the rest of the route throws; {@link InterruptedException} when the thread is
	 * interrupted while it waits for the decision
	 */
	ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next,
			RateLimitHandlerFilterFunction filter) throws Exception {
		RouteRateLimiter limiter = this.limiter;
		if (limiter == null) {
			return next.handle(request);
		}
		RouteLimitSettings route;
		try {
			route = filter.settings(request, limiter);
		}
		catch (RateLimitConfigurationException ex) {
			return misconfigured(filter, ex);
		}
		releaseEarlierAttempt(request, route);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_WAIT_SECONDS);
		ClientResolution resolution;
		CompletableFuture<ClientResolution> identified = limiter
			.client(new ServerRequestClientRequest(request), route)
			.toCompletableFuture();
		try {
			resolution = identified.get(remaining(deadline), TimeUnit.NANOSECONDS);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() instanceof CompletionException wrapped && wrapped.getCause() != null)
					? wrapped.getCause() : ex.getCause();
			throw (cause instanceof Exception exception) ? exception : ex;
		}
		catch (TimeoutException ex) {
			identified.cancel(false);
			return unanswered(request, next, route);
		}
		if (resolution.isAmbiguous()) {
			return refuse(null, RateLimitRefusal.ambiguousClient(resolution.ambiguity()));
		}
		if (!resolution.isIdentified()) {
			return refuse(null, RateLimitRefusal.clientUnidentified());
		}
		ClientKey client = resolution.client();
		// the chain is called on the request's thread; only the completion of its future runs elsewhere
		CompletableFuture<RateLimitDecision> checked = limiter.check(client, route);
		RateLimitDecision decision;
		try {
			decision = checked.get(remaining(deadline), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException | InterruptedException ex) {
			abandon(checked);
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
				throw ex;
			}
			return unanswered(request, next, route);
		}
		RouteOutcome outcome = limiter.enforce(client, route, decision);
		if (!outcome.admitted()) {
			return refuse(outcome, outcome.refusal());
		}
		return proceed(request, next, route, outcome, limiter);
	}

	private static long remaining(long deadline) {
		return Math.max(0, deadline - System.nanoTime());
	}

	/**
	 * Give up on a check no request waits for any more: cancel it, and give back the concurrency slots of a decision
	 * that arrives all the same (as the WebFlux front end does for a cancelled request).
	 */
	private static void abandon(CompletableFuture<RateLimitDecision> checked) {
		checked.cancel(false);
		checked.thenAccept((late) -> late.slots().abandon());
	}

	/**
	 * A filter whose arguments do not fit the limits for the route it runs on: found only now, since it names no
	 * group and its route's id is its group. Answered as a limiter that is unavailable (503 with a problem body,
	 * never a 500 or a stack trace) and logged at ERROR once per filter and route every 10 s, naming the fix.
	 */
	private ServerResponse misconfigured(RateLimitHandlerFilterFunction filter, RateLimitConfigurationException ex) {
		this.misconfigured.log((skipped) -> logger.error("{} cannot limit its route: {}{}", filter, ex.getMessage(),
				ThrottledLog.notLogged(skipped)));
		return refuse(null, unavailable());
	}

	private RateLimitRefusal unavailable() {
		return new RateLimitRefusal(RateLimitRefusal.Reason.LIMITER_UNAVAILABLE,
				this.limiter.failClosedRetryAfterSeconds(), List.of(), null,
				"The rate limiter is unavailable and this route fails closed; retry later.");
	}

	/**
	 * The rest of the route for an admitted request, with the rate limit header fields on its response; the
	 * concurrency slots it holds are ended once the response is written (by the {@link SlotReleaseServletFilter}:
	 * given back, or kept when the call to the upstream failed after it may have reached it), or, without that filter
	 * (a bean replaced), given back once the route has returned.
	 */
	private ServerResponse proceed(ServerRequest request, HandlerFunction<ServerResponse> next,
			RouteLimitSettings route, RouteOutcome outcome, RouteRateLimiter limiter) throws Exception {
		HeldSlots slots = limiter.hold(route, outcome);
		boolean releasedAtEnd = true;
		if (slots != HeldSlots.NONE) {
			HttpServletRequest servletRequest = request.servletRequest();
			// a Retry filter before this one runs it again per attempt: that attempt's slots go back first
			servletRequest.setAttribute(attemptSlotsAttribute(route), slots);
			releasedAtEnd = SlotReleaseServletFilter.releaseWhenDone(servletRequest, slots);
		}
		ServerResponse response;
		try {
			response = next.handle(request);
		}
		catch (Exception | Error ex) {
			if (releasedAtEnd) {
				SlotReleaseServletFilter.upstreamFailed(request.servletRequest(), ex);
			}
			throw ex;
		}
		finally {
			if (!releasedAtEnd) {
				slots.release();
			}
		}
		writeHeaders(response, outcome, limiter);
		return response;
	}

	/**
	 * Put the rate limit header fields on the response: on its own headers where they can be changed (Gateway's
	 * proxied responses), so that later filters see them; else (read-only headers, or an asynchronous response whose
	 * headers do not exist yet) straight on the servlet response, before the response writes its own.
	 */
	private static void writeHeaders(ServerResponse response, RouteOutcome outcome, RouteRateLimiter limiter) {
		if (!outcome.writesHeaders()) {
			return;
		}
		try {
			limiter.writeHeaders(outcome, response.headers());
		}
		catch (UnsupportedOperationException | IllegalStateException notWritable) {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			HttpServletResponse servletResponse = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getResponse() : null;
			if (servletResponse != null && !servletResponse.isCommitted()) {
				HttpHeaders headers = new HttpHeaders();
				limiter.writeHeaders(outcome, headers);
				headers.forEach((name, values) -> values.forEach((value) -> servletResponse.addHeader(name, value)));
			}
		}
	}

	private ServerResponse refuse(@Nullable RouteOutcome outcome, RateLimitRefusal refusal) {
		return ServerResponse.status(refusal.status()).headers((headers) -> {
			if (outcome != null && this.limiter != null) {
				this.limiter.writeHeaders(outcome, headers);
			}
		}).build((servletRequest, servletResponse) -> {
			this.responseWriter.write(servletRequest, servletResponse, refusal);
			return null;
		});
	}

	/** No decision within the safety wait: fail closed or let the request through, as the failure policy does. */
	private ServerResponse unanswered(ServerRequest request, HandlerFunction<ServerResponse> next,
			RouteLimitSettings route) throws Exception {
		this.unanswered.log((skipped) -> logger.warn("The rate limiter gave no decision within {} s for route '{}'; "
				+ "{}{}", ANSWER_WAIT_SECONDS, route.routeId(),
				route.failsClosed() ? "refusing it (critical)" : "letting the request through",
				ThrottledLog.notLogged(skipped)));
		if (route.failsClosed()) {
			return refuse(null, unavailable());
		}
		return next.handle(request);
	}

	/** The request attribute holding the slots this route's filter took for the request's latest attempt. */
	private static String attemptSlotsAttribute(RouteLimitSettings route) {
		return ATTEMPT_SLOTS_ATTRIBUTE + route.routeId() + '|' + route.group();
	}

	/**
	 * Give back the slots an earlier attempt of this request took in this route's limits (a {@code Retry} filter in
	 * front runs this filter once per attempt; the earlier attempt is over), so that a retry does not count against
	 * itself.
	 */
	private static void releaseEarlierAttempt(ServerRequest request, RouteLimitSettings route) {
		if (request.servletRequest().getAttribute(SlotReleaseServletFilter.SLOTS_ATTRIBUTE) == HeldSlots.NONE) {
			return; // the usual case: no attempt of this request took a slot (no key is built)
		}
		String attribute = attemptSlotsAttribute(route);
		if (request.servletRequest().getAttribute(attribute) instanceof HeldSlots earlier) {
			request.servletRequest().removeAttribute(attribute);
			earlier.release();
		}
	}

	/**
	 * Check the filters built while the context started (those naming a group; the others take their route's id,
	 * known on their first request), or, switched off, say which filters let every request pass; then make the
	 * configured routes known to the limiter (Java routes become known on their first request, when their id is).
	 * @throws RateLimitConfigurationException naming every filter whose arguments do not fit the limits
	 */
	@Override
	public void afterSingletonsInstantiated() {
		List<RateLimitHandlerFilterFunction> built = new ArrayList<>();
		List<WeakReference<RateLimitHandlerFilterFunction>> others = new ArrayList<>();
		for (WeakReference<RateLimitHandlerFilterFunction> entry; (entry = RateLimitFilterFunctions.UNCHECKED
			.poll()) != null;) {
			RateLimitHandlerFilterFunction filter = entry.get();
			if (filter == null || filter.builtAt() < this.contextStartedAt) {
				continue; // gone, or left over by an earlier context of this JVM that failed to start
			}
			if (filter.builtBy() == Thread.currentThread()) {
				built.add(filter); // built while this context started, on the thread that starts it
			}
			else {
				others.add(entry); // another context's, starting at the same time
			}
		}
		RateLimitFilterFunctions.UNCHECKED.addAll(others);
		if (this.limiter == null) {
			if (!built.isEmpty()) {
				logger.warn("ratelimit.enabled=false: {} RateLimit filter(s) let every request pass: {}", built.size(),
						built);
			}
			return;
		}
		List<ConfigurationViolation> violations = new ArrayList<>();
		for (RateLimitHandlerFilterFunction filter : built) {
			// without a group, the route's id is the group; not known yet: every rule but that group's limits
			// (checked against the plans' default limits here, against the group's on the first request)
			violations.addAll(this.limiter.violations(filter.toString(), filter.arguments()));
		}
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		if (this.configuredRoutes != null) {
			this.configuredRoutes.configuredFilters().forEach(this.limiter::settings);
		}
	}

	@Override
	public void setApplicationContext(ApplicationContext applicationContext) {
		this.contextStartedAt = applicationContext.getStartupDate();
	}

	@Override
	public String toString() {
		return "ServerMvcRateLimiter[" + ((this.limiter != null) ? this.limiter : "disabled") + "]";
	}

}
