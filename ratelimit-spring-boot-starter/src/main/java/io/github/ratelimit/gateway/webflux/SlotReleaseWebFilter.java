package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.chain.HeldSlots;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Gives back the concurrency slots of a request once its exchange is over: after the whole response was written
 * (Gateway's {@code NettyWriteResponseFilter} streams the body after the route's filters have completed, so a route
 * filter alone would give a slot back as soon as the upstream's response headers arrived), on an error, and when the
 * client goes away (cancellation). The outermost web filter ({@link #ORDER}); the {@code RateLimit} filter hands it
 * the slots through an exchange attribute. Requests without slots cost one attribute and one {@code doFinally}.
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
			HeldSlots held = exchange.getAttribute(SLOTS_ATTRIBUTE);
			if (held != null) {
				held.release();
			}
		});
	}

	/**
	 * Have these slots given back when the exchange is over.
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
