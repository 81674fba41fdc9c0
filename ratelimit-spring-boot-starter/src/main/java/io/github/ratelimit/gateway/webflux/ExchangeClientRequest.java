package io.github.ratelimit.gateway.webflux;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import io.github.ratelimit.gateway.client.ClientRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * The {@link ClientRequest} of a WebFlux exchange: reads its request's headers and peer address when asked, with the
 * principal the front end resolved.
 *
 * @param exchange the exchange
 * @param principal the exchange's principal when the route limits by principal, else {@code null}
 */
record ExchangeClientRequest(ServerWebExchange exchange, @Nullable Principal principal) implements ClientRequest {

	@Override
	public List<String> headerValues(String name) {
		List<String> values = this.exchange.getRequest().getHeaders().get(name);
		return (values != null) ? values : List.of();
	}

	@Override
	public @Nullable InetAddress remoteAddress() {
		InetSocketAddress peer = this.exchange.getRequest().getRemoteAddress();
		return (peer != null) ? peer.getAddress() : null;
	}

}
