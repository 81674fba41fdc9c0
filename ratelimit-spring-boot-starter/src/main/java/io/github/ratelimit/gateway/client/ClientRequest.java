package io.github.ratelimit.gateway.client;

import java.net.InetAddress;
import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What identifies the client of one request, read the same way by every front end: its header fields, the TCP peer
 * address and the authenticated principal. The WebFlux front end wraps its {@code ServerWebExchange}, the Server MVC
 * front end its {@code ServerRequest}; nothing but the principal is read up front.
 */
public interface ClientRequest {

	/**
	 * The values of a request header field, one per field line, in the order received.
	 * @param name the field name (case-insensitive)
	 * @return the values; empty when the request has no such field
	 */
	List<String> headerValues(String name);

	/**
	 * The address of the TCP peer (the client, or the nearest proxy), never looked up by name.
	 * @return the address, or {@code null} when the server knows none (e.g. a Unix domain socket)
	 */
	@Nullable InetAddress remoteAddress();

	/**
	 * The authenticated principal of the request, as the server's security integration gives it (Spring Security
	 * sets it; anonymous stand-ins are filtered out by the {@link ClientKeyResolver}). The WebFlux front end resolves
	 * it only for routes with {@code key-by: principal}.
	 * @return the principal, or {@code null} when there is none or the route does not limit by principal
	 */
	@Nullable Principal principal();

}
