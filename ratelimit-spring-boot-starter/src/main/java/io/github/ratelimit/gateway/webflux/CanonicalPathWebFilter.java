package io.github.ratelimit.gateway.webflux;

import java.net.URI;

import io.github.ratelimit.gateway.http.RequestPathCheck;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Admits every request before route matching by {@link RequestPathCheck#admit} ({@code ratelimit.non-canonical-paths}),
 * so that the path a route predicate matches, the limiter counts and the gateway forwards upstream is one and the
 * same: refused (400 for a path that is not canonical, 501 for {@code CONNECT} and {@code TRACE}, written by the
 * {@link RateLimitResponseWriter}), routed under the canonical path and query, or passed unchanged. Runs with
 * {@link #ORDER}, before Gateway's route matching and Spring Security's filter chain.
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
