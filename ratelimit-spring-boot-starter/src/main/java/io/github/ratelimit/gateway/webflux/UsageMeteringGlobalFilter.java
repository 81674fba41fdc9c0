package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.RouteMetadataUtils;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Shows the answers of routes whose {@code RateLimit} filter settles what a request reserved ({@code usage} or
 * {@code count-when}) to that filter's meter: runs just before Gateway's {@link NettyWriteResponseFilter}
 * ({@link #ORDER}), so that the answer Gateway writes passes through a {@link UsageMeteringResponse}, and ends the
 * meter once the exchange is over (the answer written in full, or cut short: an error, a timeout). On a route with
 * {@code count-when}, or whose usage is read from the answer's header fields or body, the exchange's chain runs as an
 * {@link AnswerAwaitingCall}, so that a client that goes away neither saves nor costs anything: the upstream's answer
 * decides (its rest read into the meter only, for at most the route's response timeout after the client went).
 * Exchanges of other routes pass untouched (one look at the route's filters).
 */
public class UsageMeteringGlobalFilter implements GlobalFilter, Ordered {

	/** Just before Gateway's response writing filter, as Gateway's own {@code ModifyResponseBody} filter. */
	public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

	private final @Nullable Duration responseTimeout;

	/** A filter for a gateway without a response timeout of its own (routes may set theirs). */
	public UsageMeteringGlobalFilter() {
		this(null);
	}

	/**
	 * A filter for a gateway with this response timeout.
	 * @param responseTimeout Gateway's {@code httpclient.response-timeout}, used for routes that set none; also how
	 * long the rest of an answer is read for a client gone; {@code null}: none (read until the body ends)
	 */
	public UsageMeteringGlobalFilter(@Nullable Duration responseTimeout) {
		this.responseTimeout = responseTimeout;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		if (route == null) {
			return chain.filter(exchange);
		}
		boolean settles = false;
		boolean awaitsAnswer = false;
		for (GatewayFilter filter : route.getFilters()) {
			GatewayFilter delegate = (filter instanceof OrderedGatewayFilter ordered) ? ordered.getDelegate() : filter;
			if (delegate instanceof RateLimitGatewayFilterFactory.RateLimitFilter limit) {
				settles |= limit.settles();
				awaitsAnswer |= limit.settlesByAnswer();
			}
		}
		if (!settles) {
			return chain.filter(exchange);
		}
		UsageMeteringResponse metering = new UsageMeteringResponse(exchange.getResponse(),
				awaitsAnswer ? responseTimeout(route) : null);
		ServerWebExchange metered = exchange.mutate().response(metering).build();
		metered.getAttributes().put(UsageMeteringResponse.ATTRIBUTE, metering);
		Mono<Void> answered = chain.filter(metered)
			.doFinally((signal) -> metering.end(signal == SignalType.ON_COMPLETE));
		// the upstream's answer decides, also when the client goes away before it or during it
		return awaitsAnswer ? AnswerAwaitingCall.run(metered, answered) : answered;
	}

	/** The route's response timeout as Gateway's routing filter reads it (metadata in ms, negative: none). */
	private @Nullable Duration responseTimeout(Route route) {
		Object value = route.getMetadata().get(RouteMetadataUtils.RESPONSE_TIMEOUT_ATTR);
		if (value == null) {
			return this.responseTimeout;
		}
		long millis = (value instanceof Number number) ? number.longValue() : Long.parseLong(value.toString());
		return (millis >= 0) ? Duration.ofMillis(millis) : null;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
