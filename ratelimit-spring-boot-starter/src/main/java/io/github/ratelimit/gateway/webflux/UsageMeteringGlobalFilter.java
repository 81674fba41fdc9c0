package io.github.ratelimit.gateway.webflux;

import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Shows the answers of routes whose {@code RateLimit} filter settles what a request reserved ({@code usage} or
 * {@code count-when}) to that filter's meter: runs just before Gateway's {@link NettyWriteResponseFilter}
 * ({@link #ORDER}), so that the answer Gateway writes passes through a {@link UsageMeteringResponse}, and ends the
 * meter once the exchange is over (the answer written in full, or cut short: the client gone, an error). On a route
 * with {@code count-when} the exchange's chain runs as a {@link StatusAwaitingCall}, so that a client that goes away
 * before the upstream's status is known does not keep that status from deciding. Exchanges of other routes pass
 * untouched (one look at the route's filters).
 */
public class UsageMeteringGlobalFilter implements GlobalFilter, Ordered {

	/** Just before Gateway's response writing filter, as Gateway's own {@code ModifyResponseBody} filter. */
	public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		if (route == null) {
			return chain.filter(exchange);
		}
		boolean settles = false;
		boolean countsSome = false;
		for (GatewayFilter filter : route.getFilters()) {
			GatewayFilter delegate = (filter instanceof OrderedGatewayFilter ordered) ? ordered.getDelegate() : filter;
			if (delegate instanceof RateLimitGatewayFilterFactory.RateLimitFilter limit) {
				settles |= limit.settles();
				countsSome |= limit.countsSome();
			}
		}
		if (!settles) {
			return chain.filter(exchange);
		}
		UsageMeteringResponse metering = new UsageMeteringResponse(exchange.getResponse());
		ServerWebExchange metered = exchange.mutate().response(metering).build();
		metered.getAttributes().put(UsageMeteringResponse.ATTRIBUTE, metering);
		Mono<Void> answered = chain.filter(metered)
			.doFinally((signal) -> metering.end(signal == SignalType.ON_COMPLETE));
		// count-when: the upstream's status decides, also when the client goes away before it
		return countsSome ? StatusAwaitingCall.run(metered, answered) : answered;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
