package io.github.ratelimit.gateway.client;

import java.net.InetAddress;
import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * What identifies the client of one request, read the same way by every front end: its header fields, the TCP peer
 * address and the authenticated principal. The WebFlux front end wraps its {@code ServerWebExchange}, the Server MVC
 * front end its {@code ServerRequest}; nothing is copied up front.
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
	 * sets it; anonymous stand-ins are filtered out by the {@link ClientKeyResolver}).
	 * @return the principal, or an empty {@code Mono} when there is none
	 */
	Mono<Principal> principal();

}
