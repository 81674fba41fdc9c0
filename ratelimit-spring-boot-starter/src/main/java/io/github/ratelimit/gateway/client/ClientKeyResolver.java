package io.github.ratelimit.gateway.client;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Decides who a request is limited as. Replace the default ({@link DefaultClientKeyResolver}) with a bean of this
 * type to identify clients differently; both front ends (WebFlux and Server MVC) call it.
 */
@FunctionalInterface
public interface ClientKeyResolver {

	/**
	 * Resolve the client key of a request.
	 * @param request the current request
	 * @param keyBy what the route limits by
	 * @return the client key, or an empty {@code Mono} when the client cannot be identified at all (the filter then
	 * answers 400 Bad Request rather than put the request into a shared bucket), or an
	 * {@link AmbiguousClientException} error when the request names more than one client (400 Bad Request too)
	 */
	Mono<ClientKey> resolve(ClientRequest request, KeyBy keyBy);

	/**
	 * Resolve the client key of a request on a route that may name a header ({@code key-by: header}). The filter
	 * calls this method; the default ignores the header and calls {@link #resolve(ClientRequest, KeyBy)}, so a
	 * resolver written before {@link KeyBy#HEADER} existed keeps working for the other kinds.
	 * @param request the current request
	 * @param keyBy what the route limits by
	 * @param header the header the route names with {@link KeyBy#HEADER}; {@code null} for the other kinds
	 * @return as {@link #resolve(ClientRequest, KeyBy)}
	 */
	default Mono<ClientKey> resolve(ClientRequest request, KeyBy keyBy, @Nullable String header) {
		return resolve(request, keyBy);
	}

}
