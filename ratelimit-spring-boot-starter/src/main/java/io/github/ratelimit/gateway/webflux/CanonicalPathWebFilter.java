package io.github.ratelimit.gateway.webflux;

import java.net.URI;

import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.webflux.RateLimitResponseWriter;
import io.github.ratelimit.gateway.http.RequestPathCheck;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Runs {@link RequestPathCheck} on every request before route matching ({@code ratelimit.non-canonical-paths}), so
 * that the path a route predicate matches, the limiter counts and the gateway forwards upstream is one and the same:
 * a request whose path is not canonical is refused with 400 Bad Request and an {@code application/problem+json}
 * body, or, with {@link RequestPathCheck.Policy#NORMALIZE}, routed and forwarded under its canonical path. A query
 * with characters RFC 3986 does not allow there (e.g. {@code [}) is forwarded percent-encoded
 * ({@link RequestPathCheck#encodedQuery}), since Gateway would otherwise encode the whole URI again, path included.
 * {@code CONNECT} and {@code TRACE} are answered 501 Not Implemented: a gateway routes neither (a {@code CONNECT}
 * forwarded upstream was seen to leave later requests of other clients hanging). With
 * {@link RequestPathCheck.Policy#ALLOW} the filter lets every request through unchanged. The 400 and 501 answers are
 * written by the {@link RateLimitResponseWriter}, like the limiter's other refusals.
 *
 * <p>A {@link WebFilter} runs before Gateway's route matching (which happens in the handler mapping), and with
 * {@link #ORDER} before Spring Security's filter chain; the request path is not decoded here beyond what
 * {@link RequestPathCheck} reads.
 */
public class CanonicalPathWebFilter implements WebFilter, Ordered {

	/** Order of this filter: right after Spring's observation filter, before Spring Security's chain (-100). */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

	private static final Logger logger = LoggerFactory.getLogger(CanonicalPathWebFilter.class);

	private final RequestPathCheck.Policy policy;

	private final RateLimitResponseWriter responseWriter;

	/**
	 * Create the filter.
	 * @param policy what to do with a path that is not canonical ({@link RequestPathCheck.Policy#ALLOW} lets every
	 * request through unchanged)
	 * @param responseWriter writes the 400 and 501 answers
	 */
	public CanonicalPathWebFilter(RequestPathCheck.Policy policy, RateLimitResponseWriter responseWriter) {
		this.policy = policy;
		this.responseWriter = responseWriter;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (this.policy == RequestPathCheck.Policy.ALLOW) {
			return chain.filter(exchange);
		}
		ServerHttpRequest request = exchange.getRequest();
		URI uri = request.getURI();
		String rawPath = uri.getRawPath();
		String method = request.getMethod().name();
		if (method.equals("CONNECT") || method.equals("TRACE")) {
			return this.responseWriter.write(exchange, RateLimitRefusal.methodNotImplemented(method));
		}
		RequestPathCheck.Verdict verdict = RequestPathCheck.check(rawPath, this.policy);
		if (verdict.refused()) {
			logger.debug("Refused a request whose path is not canonical: {}", verdict.problem());
			return this.responseWriter.write(exchange, RateLimitRefusal.nonCanonicalPath(verdict.problem()));
		}
		String rawQuery = uri.getRawQuery();
		String query = (rawQuery != null) ? RequestPathCheck.encodedQuery(rawQuery) : null;
		if (!verdict.repaired() && query == rawQuery) {
			return chain.filter(exchange);
		}
		String path = verdict.path();
		URI canonical = URI.create(uri.getScheme() + "://" + uri.getRawAuthority() + path
				+ ((query != null) ? "?" + query : ""));
		return chain.filter(exchange.mutate().request((builder) -> builder.uri(canonical)).build());
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
