package io.github.ratelimit.gateway.client;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Decides who a request is limited as. Replace the default ({@link DefaultClientKeyResolver}) with a bean of this
 * type to identify clients differently (e.g. by an authenticated principal).
 */
@FunctionalInterface
public interface ClientKeyResolver {

	/**
	 * Resolve the client key of a request.
	 * @param exchange the current exchange
	 * @param keyBy what the route limits by
	 * @return the client key, or an empty {@code Mono} when the client cannot be identified at all (the filter then
	 * answers 400 Bad Request rather than put the request into a shared bucket), or an
	 * {@link AmbiguousClientException} error when the request names more than one client (400 Bad Request too)
	 */
	Mono<ClientKey> resolve(ServerWebExchange exchange, KeyBy keyBy);

}
