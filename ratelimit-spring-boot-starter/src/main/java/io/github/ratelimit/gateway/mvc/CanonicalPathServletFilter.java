package io.github.ratelimit.gateway.mvc;

import java.io.IOException;

import io.github.ratelimit.gateway.http.RequestPathCheck;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Admits every request before Server MVC matches a route by {@link RequestPathCheck#admit}
 * ({@code ratelimit.non-canonical-paths}), checking the raw request URI without the context path: refused (400 for a
 * path that is not canonical, 501 for {@code CONNECT} and {@code TRACE}, written by the
 * {@link RateLimitServletResponseWriter}), routed under the canonical URI, URL and query, or passed unchanged. Runs
 * with {@link #ORDER}, before Spring Security's filter chain.
 */
public class CanonicalPathServletFilter extends OncePerRequestFilter implements Ordered {

	/** Order of this filter: early, before Spring Security's filter chain (-100). */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;


	private final RequestPathCheck.Policy policy;

	private final RateLimitServletResponseWriter responseWriter;

	/**
	 * Create the filter.
	 * @param policy what to do with a path that is not canonical ({@link RequestPathCheck.Policy#ALLOW} lets every
	 * request through unchanged)
	 * @param responseWriter writes the 400 and 501 answers
	 */
	public CanonicalPathServletFilter(RequestPathCheck.Policy policy, RateLimitServletResponseWriter responseWriter) {
		this.policy = policy;
		this.responseWriter = responseWriter;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String contextPath = request.getContextPath();
		String uri = request.getRequestURI();
		RequestPathCheck.Admission admission = RequestPathCheck.admit(request.getMethod(),
				uri.substring(Math.min(contextPath.length(), uri.length())), request.getQueryString(), this.policy);
		if (admission.refusal() != null) {
			this.responseWriter.write(request, response, admission.refusal());
		}
		else if (!admission.rewritten()) {
			chain.doFilter(request, response);
		}
		else {
			chain.doFilter(new CanonicalRequest(request, contextPath + admission.path(), admission.query()), response);
		}
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	/** The request under its canonical path and query. */
	private static final class CanonicalRequest extends HttpServletRequestWrapper {

		private final String requestUri;

		private final @Nullable String query;

		CanonicalRequest(HttpServletRequest request, String requestUri, @Nullable String query) {
			super(request);
			this.requestUri = requestUri;
			this.query = query;
		}

		@Override
		public String getRequestURI() {
			return this.requestUri;
		}

		@Override
		public StringBuffer getRequestURL() {
			StringBuffer url = new StringBuffer();
			String scheme = getScheme();
			int port = getServerPort();
			url.append(scheme).append("://").append(getServerName());
			if ((scheme.equals("http") && port != 80) || (scheme.equals("https") && port != 443)) {
				url.append(':').append(port);
			}
			return url.append(this.requestUri);
		}

		@Override
		public @Nullable String getQueryString() {
			return this.query;
		}

	}

}
