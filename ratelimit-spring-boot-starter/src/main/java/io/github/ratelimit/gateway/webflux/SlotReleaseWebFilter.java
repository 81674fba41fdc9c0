package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.chain.HeldSlots;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Ends the concurrency slots of a request once its exchange is over (the outermost web filter, {@link #ORDER}; the
 * {@code RateLimit} filter hands it the slots through an exchange attribute), by the rule of {@link HeldSlots}:
 * <ul>
 * <li>{@linkplain HeldSlots#release() given back} when the exchange ends with the upstream's response received,
 * and whenever the request never
 * reached the upstream (refused, cancelled or failed before routing, a route that is not proxied over HTTP, a
 * connection to the upstream that could not be opened);</li>
 * <li>{@linkplain HeldSlots#keep() kept} when the exchange ends after the request was sent upstream and before the
 * upstream's response arrived: the client went away (cancellation), the route's response timeout or another error
 * (among them a connection the upstream closed after the request was written, which may have delivered it), or a
 * filter answered in the upstream's place (a circuit breaker's fallback). The upstream may still be working on
 * the request and the gateway cannot see when it stops, so each slot frees itself at its limit's
 * {@code max-request-duration}; the client's requests over the limit meanwhile get 429 with a Retry-After.</li>
 * </ul>
 * Once the upstream's response headers have arrived the slot is given back however the exchange ends: completed,
 * failed while the body is copied, or cancelled (a client that closes its connection as soon as it has read the
 * response may be seen to go away before the exchange completes).
 * On a route with {@code count-when} or a {@code usage} read from the answer whose client went away, the exchange
 * is over when its {@link AnswerAwaitingCall} ends: once the upstream's answer has decided the charge (its slots
 * given back), or the call ended without a status. Whether the request was sent upstream is marked by the {@link UpstreamRequestGlobalFilter}; without it
 * (a bean replaced) every exchange gives its slots back when it ends. Requests without slots cost one attribute and one
 * {@code doFinally}.
 */
public class SlotReleaseWebFilter implements WebFilter, Ordered {

	/** Runs first, so that its completion is the exchange's (before {@link CanonicalPathWebFilter#ORDER}). */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE;

	/** Exchange attribute holding the {@link HeldSlots} to give back; {@link HeldSlots#NONE} until some are held. */
	static final String SLOTS_ATTRIBUTE = SlotReleaseWebFilter.class.getName() + ".slots";

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		exchange.getAttributes().put(SLOTS_ATTRIBUTE, HeldSlots.NONE);
		return chain.filter(exchange).doFinally((signal) -> {
			if (signal == SignalType.CANCEL && AnswerAwaitingCall.whenEnded(exchange, () -> end(exchange))) {
				return; // the client went away from a call that runs on until the upstream's status is known
			}
			end(exchange);
		});
	}

	/** The exchange is over: end its slots, if any. */
	private static void end(ServerWebExchange exchange) {
		HeldSlots held = exchange.getAttribute(SLOTS_ATTRIBUTE);
		if (held == null || held == HeldSlots.NONE) {
			return;
		}
		if (upstreamAnswered(exchange)) {
			held.release();
		}
		else {
			held.keep();
		}
	}

	/**
	 * Whether the upstream is known to be done with the exchange's request: it never got it, or its response to the
	 * latest attempt has arrived.
	 */
	private static boolean upstreamAnswered(ServerWebExchange exchange) {
		return !UpstreamRequestGlobalFilter.sentAndUnanswered(exchange);
	}

	/**
	 * Have these slots ended when the exchange is over (given back or kept, see above).
	 * @param exchange the exchange
	 * @param slots the slots an admitted request holds
	 * @return {@code false} when this filter does not run for the exchange (the caller must give them back itself)
	 */
	static boolean releaseWhenDone(ServerWebExchange exchange, HeldSlots slots) {
		HeldSlots held = exchange.getAttribute(SLOTS_ATTRIBUTE);
		if (held == null) {
			return false;
		}
		exchange.getAttributes().put(SLOTS_ATTRIBUTE, HeldSlots.both(held, slots));
		return true;
	}

	/**
	 * Whether some filter may have registered slots for this exchange: {@code false} only when this filter runs for
	 * it and nothing was registered yet.
	 * @param exchange the exchange
	 * @return whether to look for slots of an earlier attempt
	 */
	static boolean mayHoldSlots(ServerWebExchange exchange) {
		return exchange.getAttribute(SLOTS_ATTRIBUTE) != HeldSlots.NONE;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
