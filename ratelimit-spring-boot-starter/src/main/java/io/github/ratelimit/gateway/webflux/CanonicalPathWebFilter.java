package io.github.ratelimit.gateway.webflux;

import java.net.URI;

import io.github.ratelimit.gateway.webflux.RateLimitResponseWriter;
import io.github.ratelimit.gateway.http.RequestPathCheck;
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
		ServerHttpRequest request = exchange.getRequest();
		URI uri = request.getURI();
		RequestPathCheck.Admission admission = RequestPathCheck.admit(request.getMethod().name(), uri.getRawPath(),
				uri.getRawQuery(), this.policy);
		if (admission.refusal() != null) {
			return this.responseWriter.write(exchange, admission.refusal());
		}
		if (!admission.rewritten()) {
			return chain.filter(exchange);
		}
		URI canonical = URI.create(uri.getScheme() + "://" + uri.getRawAuthority() + admission.path()
				+ ((admission.query() != null) ? "?" + admission.query() : ""));
		return chain.filter(exchange.mutate().request((builder) -> builder.uri(canonical)).build());
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
