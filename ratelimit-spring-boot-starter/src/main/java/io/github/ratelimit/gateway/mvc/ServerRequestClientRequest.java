package io.github.ratelimit.gateway.mvc;

import java.net.InetAddress;
import java.security.Principal;
import java.util.List;

import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.client.ClientRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * The {@link ClientRequest} of a Server MVC request: reads its headers, the servlet's remote address (parsed as an IP
 * literal, never looked up by name) and the servlet's user principal when asked.
 *
 * @param request the request
 */
record ServerRequestClientRequest(ServerRequest request) implements ClientRequest {

	@Override
	public List<String> headerValues(String name) {
		return this.request.headers().header(name);
	}

	@Override
	public @Nullable InetAddress remoteAddress() {
		String address = this.request.servletRequest().getRemoteAddr();
		return (address != null) ? ClientAddressResolver.addressOf(address) : null;
	}

	@Override
	public @Nullable Principal principal() {
		return this.request.servletRequest().getUserPrincipal();
	}

}
