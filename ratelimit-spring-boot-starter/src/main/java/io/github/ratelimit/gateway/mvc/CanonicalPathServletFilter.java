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
 * Runs {@link RequestPathCheck} on every request before Server MVC matches a route ({@code ratelimit.non-canonical-paths}),
 * so that the path a route predicate matches, the limiter counts and the gateway forwards upstream is one and the
 * same: a request whose path is not canonical is refused with 400 Bad Request and a problem body, or, with
 * {@link RequestPathCheck.Policy#NORMALIZE}, routed and forwarded under its canonical path (the request's URI and URL
 * are the repaired ones, which Spring MVC matches routes on and Gateway forwards; a query with characters RFC 3986 does not allow there is forwarded
 * percent-encoded). {@code CONNECT} and {@code TRACE} are answered 501 Not Implemented where they reach it (on
 * Tomcat they never do: Tomcat answers {@code CONNECT} itself, and Spring's dispatcher refuses {@code TRACE} with
 * 405). With {@link RequestPathCheck.Policy#ALLOW} every request goes through unchanged. The Server MVC counterpart of the
 * WebFlux front end's {@code CanonicalPathWebFilter}; the 400 and 501 answers are written by the
 * {@link RateLimitServletResponseWriter}.
 *
 * <p>The path checked is the raw request URI without the context path; a servlet container may have refused some
 * requests already (Tomcat answers 400 to an encoded {@code /}, a malformed {@code %} escape, an unencoded
 * {@code [} in the query and a request line beyond its limit).
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
