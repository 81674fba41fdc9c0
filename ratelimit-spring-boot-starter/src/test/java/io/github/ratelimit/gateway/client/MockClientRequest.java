package io.github.ratelimit.gateway.client;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * A {@link ClientRequest} taken from an exchange built in memory, as the WebFlux front end hands it over: its
 * headers, peer address and (already resolved) principal.
 *
 * @param headers the request's header fields
 * @param peer the TCP peer, or {@code null}
 * @param user the principal, or {@code null}
 */
record MockClientRequest(HttpHeaders headers, @Nullable InetSocketAddress peer,
		@Nullable Principal user) implements ClientRequest {

	MockClientRequest(ServerWebExchange exchange) {
		this(exchange.getRequest().getHeaders(), exchange.getRequest().getRemoteAddress(),
				exchange.getPrincipal().block());
	}

	@Override
	public List<String> headerValues(String name) {
		return this.headers.getOrEmpty(name);
	}

	@Override
	public @Nullable InetAddress remoteAddress() {
		return (this.peer != null) ? this.peer.getAddress() : null;
	}

	@Override
	public @Nullable Principal principal() {
		return this.user;
	}

}
