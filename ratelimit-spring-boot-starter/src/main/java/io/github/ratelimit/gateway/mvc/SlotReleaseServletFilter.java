package io.github.ratelimit.gateway.mvc;

import java.io.IOException;

import io.github.ratelimit.gateway.chain.HeldSlots;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Gives back the concurrency slots an admitted request holds once its whole response is written, however the
 * request ends (the body copied from upstream, an error, the client gone): Server MVC writes a proxied body after
 * the route's filters have returned, so only a servlet filter around the whole request sees its end. A request
 * processed asynchronously gives them back when its async processing completes, fails or times out. The Server MVC
 * counterpart of the WebFlux front end's {@code SlotReleaseWebFilter}.
 */
public class SlotReleaseServletFilter extends OncePerRequestFilter implements Ordered {

	/** Runs first, so that its end is the request's (before {@link CanonicalPathServletFilter#ORDER}). */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE;

	/** Request attribute holding the {@link HeldSlots} to give back; {@link HeldSlots#NONE} until some are held. */
	static final String SLOTS_ATTRIBUTE = SlotReleaseServletFilter.class.getName() + ".slots";

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		request.setAttribute(SLOTS_ATTRIBUTE, HeldSlots.NONE);
		boolean async = false;
		try {
			chain.doFilter(request, response);
			async = request.isAsyncStarted();
		}
		finally {
			if (async) {
				request.getAsyncContext().addListener(new ReleaseWhenDone(request));
			}
			else {
				release(request);
			}
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
	 * Have these slots given back when the request is over.
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

	/** Gives the slots back at the end of asynchronous processing. */
	private record ReleaseWhenDone(HttpServletRequest request) implements AsyncListener {

		@Override
		public void onComplete(AsyncEvent event) {
			release(this.request);
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			release(this.request);
		}

		@Override
		public void onError(AsyncEvent event) {
			release(this.request);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this); // a new cycle: listen to it too
		}

	}

}
