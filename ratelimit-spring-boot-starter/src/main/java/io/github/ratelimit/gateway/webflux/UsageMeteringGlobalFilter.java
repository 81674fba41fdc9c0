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
 * meter once the exchange is over (the answer written in full, or cut short: the client gone, an error). Exchanges of
 * other routes pass untouched (one look at the route's filters).
 */
public class UsageMeteringGlobalFilter implements GlobalFilter, Ordered {

	/** Just before Gateway's response writing filter, as Gateway's own {@code ModifyResponseBody} filter. */
	public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		if (route == null || !settles(route)) {
			return chain.filter(exchange);
		}
		UsageMeteringResponse metering = new UsageMeteringResponse(exchange.getResponse());
		ServerWebExchange metered = exchange.mutate().response(metering).build();
		metered.getAttributes().put(UsageMeteringResponse.ATTRIBUTE, metering);
		return chain.filter(metered).doFinally((signal) -> metering.end(signal == SignalType.ON_COMPLETE));
	}

	private static boolean settles(Route route) {
		for (GatewayFilter filter : route.getFilters()) {
			GatewayFilter delegate = (filter instanceof OrderedGatewayFilter ordered) ? ordered.getDelegate() : filter;
			if (delegate instanceof RateLimitGatewayFilterFactory.RateLimitFilter limit && limit.settles()) {
				return true;
			}
		}
		return false;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
