package io.github.ratelimit.gateway.mvc;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.protection.UpstreamPermit;
import io.github.ratelimit.gateway.route.AttemptSlots;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitOutcome;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import io.github.ratelimit.gateway.route.RouteUsage;
import io.github.ratelimit.gateway.route.UsageMeter;
import io.github.ratelimit.gateway.usage.JsonFieldReader;
import io.github.ratelimit.gateway.usage.UsageReading;
import io.github.ratelimit.gateway.support.ThrottledLog;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.http.HttpHeaders;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The Server MVC front end of the limiter: runs the {@link RateLimitHandler} for the {@code RateLimit} filters of
 * Server MVC routes ({@link RateLimitFilterFunctions}) and writes its outcome as a {@link ServerResponse}. Allowed
 * requests go upstream with the rate limit header fields; refused ones are answered by the
 * {@link RateLimitServletResponseWriter} (429, 503, 400), exactly as on WebFlux.
 *
 * <p>The request's thread waits for the handler's outcome, which the chain's failure policy completes within
 * {@code ratelimit.redis-timeout}, and makes it there: a decision that arrives on another thread is handed back to
 * the waiting request thread ({@link WaitingThread}). The wait ends after {@value #ANSWER_WAIT_SECONDS} s at most (a replaced bean whose future
 * never completes): the route then fails closed (503) or lets the request through, as the failure policy would.
 */
public final class ServerMvcFrontEnd {

	/** Longest wait for the handler's outcome, in seconds: far beyond the chain's own timeout, a safety net only. */
	static final long ANSWER_WAIT_SECONDS = 30;

	private static final Logger logger = LoggerFactory.getLogger(ServerMvcFrontEnd.class);

	private final RateLimitHandler handler;

	private final RateLimitRoutes routes;

	private final RateLimitServletResponseWriter responseWriter;

	private final int reserveBodyLimit;

	private final ThrottledLog unanswered = new ThrottledLog(Duration.ofSeconds(10));

	private final ThrottledLog misconfigured = new ThrottledLog(Duration.ofSeconds(10));

	/**
	 * Create the front end.
	 * @param handler decides each request
	 * @param routes resolves and checks each route's arguments
	 * @param responseWriter writes the answers to refused requests
	 * @param reserveBodyLimit most bytes of a request body read for its estimate ({@code reserve: json:<field>};
	 * {@code ratelimit.usage.reserve-body-limit})
	 */
	public ServerMvcFrontEnd(RateLimitHandler handler, RateLimitRoutes routes,
			RateLimitServletResponseWriter responseWriter, int reserveBodyLimit) {
		this.handler = handler;
		this.routes = routes;
		this.responseWriter = responseWriter;
		this.reserveBodyLimit = reserveBodyLimit;
	}

	/**
	 * Limit one request of a route.
	 * @param request the request
	 * @param next the rest of the route
	 * @param filter the route's filter, with its arguments
	 * @return the upstream's response with the rate limit header fields, or the refusal
	 * @throws Exception what the rest of the route throws; {@link InterruptedException} when the thread is
	 * interrupted while it waits for the outcome
	 */
	ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next,
			RateLimitHandlerFilterFunction filter) throws Exception {
		RouteLimitSettings route;
		try {
			route = filter.settings(request, this.routes);
		}
		catch (RateLimitConfigurationException ex) {
			return misconfigured(filter, ex);
		}
		HttpServletRequest servletRequest = request.servletRequest();
		if (servletRequest.getAttribute(SlotReleaseServletFilter.SLOTS_ATTRIBUTE) != HeldSlots.NONE) {
			// an earlier attempt (Retry) may have taken slots: over, so given back
			AttemptSlots.endPrevious(new ServletAttemptAttributes(servletRequest), route, () -> false);
		}
		UsageReading estimate = null;
		if (route.usage().reserve() instanceof RouteUsage.Reserve.Json field) {
			// the estimate is in the body: read it ahead (up to the limit); the upstream gets the whole body
			JsonFieldReader reader = new JsonFieldReader(field.field());
			HeldBodyRequest held = HeldBodyRequest.read(request, this.reserveBodyLimit, reader::feed);
			if (held.complete()) {
				reader.end();
			}
			estimate = reader.reading();
			request = held;
		}
		WaitingThread requestThread = new WaitingThread();
		CompletableFuture<RateLimitOutcome> decided = this.handler.handle(new ServerRequestClientRequest(request),
				route, requestThread, estimate);
		RateLimitOutcome outcome;
		try {
			// cancelled when it ends without an answer: abandons the check, a later decision gives its slots back
			outcome = requestThread.await(decided, ANSWER_WAIT_SECONDS, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
		catch (TimeoutException ex) {
			return unanswered(request, next, route);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw ex;
		}
		return outcome.admitted() ? proceed(request, next, route, outcome) : refuse(outcome);
	}

	/**
	 * A filter whose arguments do not fit the limits for the route it runs on: found only now, since it names no
	 * group and its route's id is its group. Answered as a limiter that is unavailable (503 with a problem body,
	 * never a 500 or a stack trace) and logged at ERROR once per filter and route every 10 s, naming the fix.
	 */
	private ServerResponse misconfigured(RateLimitHandlerFilterFunction filter, RateLimitConfigurationException ex) {
		this.misconfigured.log((skipped) -> logger.error("{} cannot limit its route: {}{}", filter, ex.getMessage(),
				ThrottledLog.notLogged(skipped)));
		return refuse(this.handler.limiterUnavailable());
	}

	/**
	 * The rest of the route for an admitted request, with the rate limit header fields on its response; the
	 * concurrency slots it holds are ended once the response is written (by the {@link SlotReleaseServletFilter}:
	 * given back, or kept when the call to the upstream failed after it may have reached it), or, without that filter
	 * (a bean replaced), given back once the route has returned.
	 */
	private ServerResponse proceed(ServerRequest request, HandlerFunction<ServerResponse> next,
			RouteLimitSettings route, RateLimitOutcome outcome) throws Exception {
		HeldSlots slots = outcome.slots();
		boolean releasedAtEnd = true;
		if (slots != HeldSlots.NONE) {
			HttpServletRequest servletRequest = request.servletRequest();
			AttemptSlots.remember(new ServletAttemptAttributes(servletRequest), route, slots);
			releasedAtEnd = SlotReleaseServletFilter.releaseWhenDone(servletRequest, slots);
		}
		ServerResponse response;
		try {
			response = next.handle(request);
			answered(outcome.permit(), response);
		}
		catch (Exception | Error ex) {
			outcome.permit().failed(); // a drop: the upstream gave no answer
			if (releasedAtEnd) {
				SlotReleaseServletFilter.upstreamFailed(request.servletRequest(), ex);
			}
			outcome.meter().end(false); // no answer
			throw ex;
		}
		finally {
			if (!releasedAtEnd) {
				slots.release();
			}
		}
		writeHeaders(response, outcome);
		UsageMeter meter = outcome.meter();
		return meter.isActive() ? new UsageMeteringResponse(response, meter) : response;
	}

	/**
	 * Tell the request's upstream permit the upstream's answer: its latency sample ends when the route returns, which
	 * in Gateway Server MVC is once the upstream's response header fields have arrived (the body is copied later). An
	 * asynchronous response whose status is not known yet gives no sample.
	 */
	private static void answered(UpstreamPermit permit, ServerResponse response) {
		try {
			permit.answered(response.statusCode().value());
		}
		catch (IllegalStateException notYetAnswered) {
			// the permit is released with the slots, without a sample
		}
	}

	/**
	 * Put the rate limit header fields on the response: on its own headers where they can be changed (Gateway's
	 * proxied responses), so that later filters see them; else (read-only headers, or an asynchronous response whose
	 * headers do not exist yet) straight on the servlet response, before the response writes its own.
	 */
	private static void writeHeaders(ServerResponse response, RateLimitOutcome outcome) {
		if (outcome.headers().isEmpty()) {
			return;
		}
		try {
			outcome.writeHeaders(response.headers());
		}
		catch (UnsupportedOperationException | IllegalStateException notWritable) {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			HttpServletResponse servletResponse = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getResponse() : null;
			if (servletResponse != null && !servletResponse.isCommitted()) {
				HttpHeaders headers = outcome.headers();
				headers.forEach((name, values) -> values.forEach((value) -> servletResponse.addHeader(name, value)));
			}
		}
	}

	private ServerResponse refuse(RateLimitOutcome outcome) {
		RateLimitRefusal refusal = Objects.requireNonNull(outcome.refusal(), "a refused outcome carries its refusal");
		return ServerResponse.status(refusal.status())
			.headers(outcome::writeHeaders)
			.build((servletRequest, servletResponse) -> {
				this.responseWriter.write(servletRequest, servletResponse, refusal);
				return null;
			});
	}

	/** No outcome within the safety wait: fail closed or let the request through, as the failure policy does. */
	private ServerResponse unanswered(ServerRequest request, HandlerFunction<ServerResponse> next,
			RouteLimitSettings route) throws Exception {
		this.unanswered.log((skipped) -> logger.warn("The rate limiter gave no decision within {} s for route '{}'; "
				+ "{}{}", ANSWER_WAIT_SECONDS, route.routeId(),
				route.failsClosed() ? "refusing it (critical)" : "letting the request through",
				ThrottledLog.notLogged(skipped)));
		return route.failsClosed() ? refuse(this.handler.limiterUnavailable()) : next.handle(request);
	}

	@Override
	public String toString() {
		return "ServerMvcFrontEnd[" + this.handler + "]";
	}

}
