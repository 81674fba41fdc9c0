package io.github.ratelimit.gateway.mvc;

import java.io.IOException;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.support.UpstreamFailures;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Ends the concurrency slots an admitted request holds once the request is over (the proxied body written), by the
 * rule of {@link HeldSlots}: given back once the response was written, or when the request failed before the
 * upstream got it (a connection that could not be opened); kept, to free themselves at their limit's
 * {@code max-request-duration}, when the request failed after it was sent upstream (the upstream client's read
 * timeout, an upstream read error, the client gone while the body was copied), since the upstream may still be
 * working on it. A request processed asynchronously gives them back when its async processing completes (kept if
 * the upstream call failed after sending), and keeps them when it fails or times out (its handler may still be at
 * work). The Server MVC counterpart of the WebFlux front end's {@code SlotReleaseWebFilter}.
 */
public class SlotReleaseServletFilter extends OncePerRequestFilter implements Ordered {

	/** Runs first, so that its end is the request's (before {@link CanonicalPathServletFilter#ORDER}). */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE;

	/** Request attribute holding the {@link HeldSlots} to give back; {@link HeldSlots#NONE} until some are held. */
	static final String SLOTS_ATTRIBUTE = SlotReleaseServletFilter.class.getName() + ".slots";

	/** Request attribute set when the call to the upstream failed after the request may have reached it. */
	static final String UPSTREAM_FAILED_ATTRIBUTE = SlotReleaseServletFilter.class.getName() + ".upstreamFailed";

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		request.setAttribute(SLOTS_ATTRIBUTE, HeldSlots.NONE);
		boolean async = false;
		Throwable failure = null;
		try {
			chain.doFilter(request, response);
			async = request.isAsyncStarted();
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (async) {
				request.getAsyncContext().addListener(new ReleaseWhenDone(request));
			}
			else if (request.getAttribute(UPSTREAM_FAILED_ATTRIBUTE) != null
					|| (failure != null && !UpstreamFailures.notConnected(failure))) {
				keep(request);
			}
			else {
				release(request);
			}
		}
	}

	/**
	 * Have the request's slots kept when it is over: the route's call to the upstream failed after the request may
	 * have reached it (any error but a connection that could not be opened), whatever is answered instead.
	 * @param request the request
	 * @param error the error of the call to the upstream
	 */
	static void upstreamFailed(HttpServletRequest request, Throwable error) {
		if (!UpstreamFailures.notConnected(error)) {
			request.setAttribute(UPSTREAM_FAILED_ATTRIBUTE, Boolean.TRUE);
		}
	}

	private static void keep(HttpServletRequest request) {
		if (request.getAttribute(SLOTS_ATTRIBUTE) instanceof HeldSlots held) {
			request.setAttribute(SLOTS_ATTRIBUTE, HeldSlots.NONE);
			held.keep();
		}
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return true; // the listener gives the slots back
	}

	private static void release(HttpServletRequest request) {
		if (request.getAttribute(SLOTS_ATTRIBUTE) instanceof HeldSlots held) {
			request.setAttribute(SLOTS_ATTRIBUTE, HeldSlots.NONE);
			held.release();
		}
	}

	/**
	 * Have these slots ended when the request is over (given back or kept, see above).
	 * @param request the request
	 * @param slots the slots an admitted request holds
	 * @return {@code false} when this filter does not run for the request (the caller must give them back itself)
	 */
	static boolean releaseWhenDone(HttpServletRequest request, HeldSlots slots) {
		if (!(request.getAttribute(SLOTS_ATTRIBUTE) instanceof HeldSlots held)) {
			return false;
		}
		request.setAttribute(SLOTS_ATTRIBUTE, HeldSlots.both(held, slots));
		return true;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	/** Ends the slots at the end of asynchronous processing: given back when it completed, else kept. */
	private record ReleaseWhenDone(HttpServletRequest request) implements AsyncListener {

		@Override
		public void onComplete(AsyncEvent event) {
			if (this.request.getAttribute(UPSTREAM_FAILED_ATTRIBUTE) != null) {
				keep(this.request);
			}
			else {
				release(this.request); // a no-op after onTimeout or onError kept them
			}
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			keep(this.request);
		}

		@Override
		public void onError(AsyncEvent event) {
			keep(this.request);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this); // a new cycle: listen to it too
		}

	}

}
