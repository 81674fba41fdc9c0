package io.github.ratelimit.gateway.client;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * The {@link ClientRequest} of an exchange built in memory, as the WebFlux front end gives it: its headers, peer
 * address and principal.
 *
 * @param exchange the exchange
 */
record MockClientRequest(ServerWebExchange exchange) implements ClientRequest {

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

	@Override
	public @Nullable Principal principal() {
		return this.exchange.getPrincipal().block();
	}

}
