package io.github.ratelimit.gateway.client;

import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

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
	 * @return the client: identified, not identified, or ambiguous; completed at once when nothing is waited for,
	 * never completed exceptionally
	 */
	CompletionStage<ClientResolution> resolve(ClientRequest request, KeyBy keyBy);

	/**
	 * Resolve the client key of a request on a route that may name a header ({@code key-by: header}). The front ends
	 * call this method; the default ignores the header and calls {@link #resolve(ClientRequest, KeyBy)}.
	 * @param request the current request
	 * @param keyBy what the route limits by
	 * @param header the header the route names with {@link KeyBy#HEADER}; {@code null} for the other kinds
	 * @return as {@link #resolve(ClientRequest, KeyBy)}
	 */
	default CompletionStage<ClientResolution> resolve(ClientRequest request, KeyBy keyBy, @Nullable String header) {
		return resolve(request, keyBy);
	}

}
