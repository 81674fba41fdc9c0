package io.github.ratelimit.sample.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.springframework.beans.factory.DisposableBean;

/**
 * The demo upstream of a sample gateway: an HTTP server on {@value #HOST} and a free port that answers every request
 * with {@code 200} and a small JSON document naming itself, the method and the path ({@link #body(String, String)}).
 * Paths under {@value #SLOW_PREFIX} are slow reports: answered after {@link #SLOW_ANSWER} (for the concurrency limit
 * of the {@code reports} group). Each sample supplies the server.
 */
public abstract class AbstractDemoUpstream implements DisposableBean, AutoCloseable {

	/** The address the server listens on. */
	protected static final String HOST = "127.0.0.1";

	/** Paths answered slowly. */
	public static final String SLOW_PREFIX = "/api/reports/";

	/** How long a slow report takes. */
	public static final Duration SLOW_ANSWER = Duration.ofSeconds(2);

	/**
	 * The base URI of the server.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	public String uri() {
		return "http://" + HOST + ":" + port();
	}

	/**
	 * The port the server listens on.
	 * @return the port
	 */
	public abstract int port();

	/** Stop the server; its port is closed when this returns. Idempotent. */
	@Override
	public abstract void close();

	@Override
	public void destroy() {
		close();
	}

	@Override
	public String toString() {
		return "DemoUpstream[" + uri() + "]";
	}

	/**
	 * The answer to a request.
	 * @param method the request method, e.g. {@code GET}
	 * @param path the raw request path, without the query
	 * @return e.g. {@code {"upstream":"demo","method":"GET","path":"/api/search/x"}} in UTF-8
	 */
	public static byte[] body(String method, String path) {
		StringBuilder json = new StringBuilder(64).append("{\"upstream\":\"demo\",\"method\":");
		appendJsonString(json, method);
		json.append(",\"path\":");
		appendJsonString(json, path);
		return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
	}

	private static void appendJsonString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c < 0x20) {
				json.append(String.format("\\u%04x", (int) c));
			}
			else {
				json.append(c);
			}
		}
		json.append('"');
	}

}
