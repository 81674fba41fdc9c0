package io.github.ratelimit.gateway.webflux;

import java.net.URI;

import io.github.ratelimit.gateway.support.UpstreamFailures;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyRoutingFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Marks an exchange whose request is about to be sent to an HTTP upstream, for the {@link SlotReleaseWebFilter}: an
 * exchange so marked that ends before the upstream's response was written keeps its concurrency slots. Runs right
 * before Gateway's routing filters ({@link #ORDER}); the mark is removed again when the connection to the upstream
 * cannot be opened (the request never reached it). The mark survives the reset done by the {@code Retry} and
 * {@code CircuitBreaker} filters. Each attempt also records whether the
 * upstream answered it (its response headers arrived), so that a {@code Retry} filter's next attempt can tell whether
 * the upstream may still be working on the one before, and tells an {@link AnswerAwaitingCall} (a route with
 * {@code count-when} or a {@code usage} read from the answer) that the status is known.
 */
public class UpstreamRequestGlobalFilter implements GlobalFilter, Ordered {

	/** Just before Gateway's routing filters ({@link NettyRoutingFilter#ORDER} and the WebSocket one). */
	public static final int ORDER = NettyRoutingFilter.ORDER - 2;

	/** Exchange attribute set ({@link Boolean#TRUE}) while the exchange's request may have reached the upstream. */
	static final String SENT_ATTRIBUTE = UpstreamRequestGlobalFilter.class.getName() + ".sent";

	/** Exchange attribute set ({@link Boolean#TRUE}) when the upstream answered the latest attempt. */
	static final String ANSWERED_ATTRIBUTE = UpstreamRequestGlobalFilter.class.getName() + ".answered";

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		String scheme = (url != null) ? url.getScheme() : null;
		if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
			return chain.filter(exchange); // forward:, no:, ws: ... answered here or ended with the client
		}
		exchange.getAttributes().put(SENT_ATTRIBUTE, Boolean.TRUE);
		exchange.getAttributes().remove(ANSWERED_ATTRIBUTE);
		return chain.filter(exchange).doOnSuccess((done) -> {
			if (exchange.getAttribute(ServerWebExchangeUtils.CLIENT_RESPONSE_ATTR) != null) {
				exchange.getAttributes().put(ANSWERED_ATTRIBUTE, Boolean.TRUE);
				AnswerAwaitingCall.statusKnown(exchange);
			}
		}).doOnError(UpstreamFailures::notConnected, (ex) -> exchange.getAttributes().remove(SENT_ATTRIBUTE));
	}

	/**
	 * Whether the upstream may still be working on the exchange's latest attempt: it was sent, and no response to it
	 * has arrived (it timed out, failed after sending, or is still running).
	 * @param exchange the exchange
	 * @return whether the latest attempt was sent and not answered
	 */
	static boolean sentAndUnanswered(ServerWebExchange exchange) {
		return sentUpstream(exchange) && exchange.getAttribute(ANSWERED_ATTRIBUTE) == null;
	}

	/**
	 * Whether the exchange's request may have reached the upstream.
	 * @param exchange the exchange
	 * @return whether it was marked
	 */
	static boolean sentUpstream(ServerWebExchange exchange) {
		return exchange.getAttribute(SENT_ATTRIBUTE) != null;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
