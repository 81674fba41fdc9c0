package io.github.ratelimit.gateway.key;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Default {@link ClientKeyResolver}: on {@link KeyBy#API_KEY} routes, a non-blank API key header whose plan the
 * {@link PlanResolver} knows identifies the client (hashed); otherwise, and on {@link KeyBy#IP} routes, the client
 * IP address from {@link ClientAddressResolver}, under the anonymous plan.
 *
 * <p>One identity per request: on {@link KeyBy#API_KEY} routes a request with several API key header lines, or with a
 * comma in the key (how HTTP joins repeated field lines, RFC 9110 section 5.3), is refused with an
 * {@link AmbiguousClientException}: the limiter would take one key while an upstream may authenticate another.
 */
public class DefaultClientKeyResolver implements ClientKeyResolver {

	private static final Logger logger = LoggerFactory.getLogger(DefaultClientKeyResolver.class);

	private final String apiKeyHeader;

	private final String anonymousPlan;

	private final PlanResolver planResolver;

	private final ClientAddressResolver addressResolver;

	/**
	 * Create a resolver.
	 * @param apiKeyHeader name of the header carrying the API key
	 * @param anonymousPlan plan for clients limited by IP address
	 * @param planResolver finds the plan of an API key
	 * @param addressResolver finds the client IP address
	 */
	public DefaultClientKeyResolver(String apiKeyHeader, String anonymousPlan, PlanResolver planResolver,
			ClientAddressResolver addressResolver) {
		this.apiKeyHeader = apiKeyHeader;
		this.anonymousPlan = anonymousPlan;
		this.planResolver = planResolver;
		this.addressResolver = addressResolver;
	}

	@Override
	public Mono<ClientKey> resolve(ServerWebExchange exchange, KeyBy keyBy) {
		Mono<ClientKey> byAddress = Mono.defer(() -> Mono.justOrEmpty(this.addressResolver.resolve(exchange)
			.map((ip) -> new ClientKey(ClientKey.Kind.IP, ip, this.anonymousPlan))));
		if (keyBy == KeyBy.IP) {
			return byAddress;
		}
		List<String> apiKeys = exchange.getRequest().getHeaders().get(this.apiKeyHeader);
		if (apiKeys == null || apiKeys.isEmpty()) {
			return byAddress;
		}
		String apiKey = apiKeys.get(0);
		if (apiKeys.size() > 1 || apiKey.indexOf(',') >= 0) {
			return Mono.error(new AmbiguousClientException("The request carries more than one " + this.apiKeyHeader
					+ " value (several header lines, or a comma-separated list); send exactly one API key."));
		}
		if (apiKey.isBlank()) {
			return byAddress;
		}
		String trimmed = apiKey.strip();
		return this.planResolver.resolvePlan(trimmed)
			.map((plan) -> new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(trimmed), plan))
			.onErrorResume((ex) -> {
				logger.warn("Plan lookup failed for API key {}; limiting the request by IP address: {}",
						ApiKeyHasher.hash(trimmed), ex.toString());
				return Mono.empty();
			})
			.switchIfEmpty(byAddress);
	}

}
