package io.github.ratelimit.gateway.client;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.plan.KnownPlans;
import io.github.ratelimit.gateway.plan.PlanResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Default {@link ClientKeyResolver}: on {@link KeyBy#API_KEY} routes, a non-blank API key header whose plan the
 * {@link PlanResolver} knows identifies the client (hashed); otherwise, and on {@link KeyBy#IP} routes, the client
 * IP address from {@link ClientAddressResolver}, under the anonymous plan. The plan is decided here, once: a key
 * whose plan the limits in force do not define gets the anonymous plan.
 *
 * <p>One identity per request: on {@link KeyBy#API_KEY} routes a request with several API key header lines, or with a
 * comma in the key (how HTTP joins repeated field lines, RFC 9110 section 5.3), is refused with an
 * {@link AmbiguousClientException}: the limiter would take one key while an upstream may authenticate another. So is
 * a request with a look-alike of the header whose {@code -} are written {@code _} ({@code X_API_KEY}: CGI and WSGI
 * upstreams read both as {@code HTTP_X_API_KEY}), and a key with characters other than visible ASCII once the
 * optional whitespace around a field value (space and tab, RFC 9110 section 5.5) is removed: {@code U+00A0} or
 * {@code U+0085} at its end would be trimmed away by many upstreams' string functions but not by Java's.
 */
public class DefaultClientKeyResolver implements ClientKeyResolver {

	private static final Logger logger = LoggerFactory.getLogger(DefaultClientKeyResolver.class);

	private final String apiKeyHeader;

	private final KnownPlans plans;

	private final PlanResolver planResolver;

	private final ClientAddressResolver addressResolver;

	/** The header's name with some or all of its '-' written '_' (at most 15 look-alikes). */
	private final List<String> lookAlikeHeaders;

	/**
	 * Create a resolver.
	 * @param apiKeyHeader name of the header carrying the API key
	 * @param anonymousPlan plan for clients limited by IP address
	 * @param planResolver finds the plan of an API key
	 * @param addressResolver finds the client IP address
	 */
	public DefaultClientKeyResolver(String apiKeyHeader, String anonymousPlan, PlanResolver planResolver,
			ClientAddressResolver addressResolver) {
		this(apiKeyHeader, KnownPlans.any(anonymousPlan), planResolver, addressResolver);
	}

	/**
	 * Create a resolver that decides the plan once: an API key whose plan the limits in force do not define is
	 * limited under the anonymous plan (logged at WARN with the key's hash).
	 * @param apiKeyHeader name of the header carrying the API key
	 * @param plans the plans the limits in force define, and the anonymous plan
	 * @param planResolver finds the plan of an API key
	 * @param addressResolver finds the client IP address
	 */
	public DefaultClientKeyResolver(String apiKeyHeader, KnownPlans plans, PlanResolver planResolver,
			ClientAddressResolver addressResolver) {
		this.apiKeyHeader = apiKeyHeader;
		this.plans = plans;
		this.planResolver = planResolver;
		this.addressResolver = addressResolver;
		this.lookAlikeHeaders = lookAlikes(apiKeyHeader);
	}

	private static List<String> lookAlikes(String header) {
		List<Integer> dashes = new ArrayList<>();
		for (int i = 0; i < header.length() && dashes.size() < 4; i++) {
			if (header.charAt(i) == '-') {
				dashes.add(i);
			}
		}
		List<String> names = new ArrayList<>();
		for (int mask = 1; mask < (1 << dashes.size()); mask++) {
			char[] name = header.toCharArray();
			for (int bit = 0; bit < dashes.size(); bit++) {
				if ((mask & (1 << bit)) != 0) {
					name[dashes.get(bit)] = '_';
				}
			}
			names.add(new String(name));
		}
		return List.copyOf(names);
	}

	@Override
	public Mono<ClientKey> resolve(ServerWebExchange exchange, KeyBy keyBy) {
		Mono<ClientKey> byAddress = Mono.defer(() -> Mono.justOrEmpty(this.addressResolver.resolve(exchange)
			.map((ip) -> new ClientKey(ClientKey.Kind.IP, ip, this.plans.anonymousPlan()))));
		if (keyBy == KeyBy.IP) {
			return byAddress;
		}
		HttpHeaders headers = exchange.getRequest().getHeaders();
		for (String lookAlike : this.lookAlikeHeaders) {
			if (headers.containsHeader(lookAlike)) {
				return Mono.error(new AmbiguousClientException("The request carries a header named like "
						+ this.apiKeyHeader + " with '_' for '-' (" + lookAlike + "), which upstreams may read as "
						+ this.apiKeyHeader + "; send only " + this.apiKeyHeader + "."));
			}
		}
		List<String> apiKeys = headers.get(this.apiKeyHeader);
		if (apiKeys == null || apiKeys.isEmpty()) {
			return byAddress;
		}
		String apiKey = apiKeys.get(0);
		if (apiKeys.size() > 1 || apiKey.indexOf(',') >= 0) {
			return Mono.error(new AmbiguousClientException("The request carries more than one " + this.apiKeyHeader
					+ " value (several header lines, or a comma-separated list); send exactly one API key."));
		}
		String trimmed = withoutOptionalWhitespace(apiKey);
		if (trimmed.isEmpty()) {
			return byAddress;
		}
		if (!isVisibleAscii(trimmed)) {
			return Mono.error(new AmbiguousClientException("The " + this.apiKeyHeader
					+ " value contains characters other than visible ASCII (e.g. a no-break space or a control"
					+ " character), which upstreams may strip or read differently; send the key alone."));
		}
		return this.planResolver.resolvePlan(trimmed)
			.map((plan) -> apiKeyClient(ApiKeyHasher.hash(trimmed), plan))
			.onErrorResume((ex) -> {
				logger.warn("Plan lookup failed for API key {}; limiting the request by IP address: {}",
						ApiKeyHasher.hash(trimmed), ex.toString());
				return Mono.empty();
			})
			.switchIfEmpty(byAddress);
	}

	private ClientKey apiKeyClient(String hash, String plan) {
		if (this.plans.isKnown(plan)) {
			return new ClientKey(ClientKey.Kind.API_KEY, hash, plan);
		}
		String anonymous = this.plans.anonymousPlan();
		logger.warn("Client {} has plan '{}', which is not configured; applying plan '{}'", hash, plan, anonymous);
		return new ClientKey(ClientKey.Kind.API_KEY, hash, anonymous);
	}

	/** The value without leading and trailing spaces and tabs (RFC 9110 section 5.5: OWS). */
	private static String withoutOptionalWhitespace(String value) {
		int start = 0;
		int end = value.length();
		while (start < end && (value.charAt(start) == ' ' || value.charAt(start) == '\t')) {
			start++;
		}
		while (end > start && (value.charAt(end - 1) == ' ' || value.charAt(end - 1) == '\t')) {
			end--;
		}
		return value.substring(start, end);
	}

	private static boolean isVisibleAscii(String value) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c < 0x21 || c > 0x7e) {
				return false;
			}
		}
		return true;
	}

}
