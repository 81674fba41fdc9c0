package io.github.ratelimit.gateway.mvc;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpSession;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpMethod;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.RequestPath;
import org.springframework.util.MultiValueMap;
import org.springframework.web.accept.ApiVersionStrategy;
import org.springframework.web.bind.WebDataBinder;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.util.UriBuilder;

/**
 * A request whose body was read ahead up to a limit (for the estimate of a route with {@code reserve: json:<field>}):
 * everything is the original request's, except its servlet request's input stream, which gives the bytes read ahead
 * and then the rest of the body. Gateway's proxy reads the body from that stream.
 */
final class HeldBodyRequest implements ServerRequest {

	private final ServerRequest request;

	private final HttpServletRequest servletRequest;

	private final boolean complete;

	private HeldBodyRequest(ServerRequest request, byte[] head, InputStream rest, boolean complete) {
		this.request = request;
		this.complete = complete;
		ServletInputStream body = new ReplayedInputStream(new SequenceInputStream(new ByteArrayInputStream(head), rest));
		this.servletRequest = new HttpServletRequestWrapper(request.servletRequest()) {

			@Override
			public ServletInputStream getInputStream() {
				return body;
			}

		};
	}

	/**
	 * Read a request's body ahead, at most {@code limit} bytes, showing them to a reader.
	 * @param request the request
	 * @param limit most bytes to read ahead (1 or more)
	 * @param reader sees the bytes read ahead, once, as a view it must not keep
	 * @return the request, its body whole
	 * @throws IOException if the body cannot be read
	 */
	static HeldBodyRequest read(ServerRequest request, int limit, Consumer<ByteBuffer> reader) throws IOException {
		InputStream in = request.servletRequest().getInputStream();
		byte[] head = in.readNBytes(limit);
		boolean complete = head.length < limit;
		if (head.length > 0) {
			reader.accept(ByteBuffer.wrap(head).asReadOnlyBuffer());
		}
		return new HeldBodyRequest(request, head, in, complete);
	}

	/**
	 * Whether the whole body was read ahead (it ended within the limit).
	 * @return {@code true} when the reader saw every byte
	 */
	boolean complete() {
		return this.complete;
	}

	@Override
	public HttpServletRequest servletRequest() {
		return this.servletRequest;
	}

	@Override
	public HttpMethod method() {
		return this.request.method();
	}

	@Override
	public URI uri() {
		return this.request.uri();
	}

	@Override
	public UriBuilder uriBuilder() {
		return this.request.uriBuilder();
	}

	@Override
	public String path() {
		return this.request.path();
	}

	@Override
	public RequestPath requestPath() {
		return this.request.requestPath();
	}

	@Override
	public Headers headers() {
		return this.request.headers();
	}

	@Override
	public MultiValueMap<String, Cookie> cookies() {
		return this.request.cookies();
	}

	@Override
	public Optional<InetSocketAddress> remoteAddress() {
		return this.request.remoteAddress();
	}

	@Override
	public List<HttpMessageConverter<?>> messageConverters() {
		return this.request.messageConverters();
	}

	@Override
	public @Nullable ApiVersionStrategy apiVersionStrategy() {
		return this.request.apiVersionStrategy();
	}

	@Override
	public <T> T body(Class<T> bodyType) throws ServletException, IOException {
		return this.request.body(bodyType);
	}

	@Override
	public <T> T body(ParameterizedTypeReference<T> bodyType) throws ServletException, IOException {
		return this.request.body(bodyType);
	}

	@Override
	public <T> T bind(Class<T> bindType, Consumer<WebDataBinder> dataBinderCustomizer)
			throws org.springframework.validation.BindException {
		return this.request.bind(bindType, dataBinderCustomizer);
	}

	@Override
	public Map<String, Object> attributes() {
		return this.request.attributes();
	}

	@Override
	public MultiValueMap<String, String> params() {
		return this.request.params();
	}

	@Override
	public MultiValueMap<String, Part> multipartData() throws IOException, ServletException {
		return this.request.multipartData();
	}

	@Override
	public Map<String, String> pathVariables() {
		return this.request.pathVariables();
	}

	@Override
	public HttpSession session() {
		return this.request.session();
	}

	@Override
	public Optional<Principal> principal() {
		return this.request.principal();
	}

	@Override
	public String toString() {
		return this.request.toString();
	}

	/** The body read ahead and the rest, as a servlet input stream (blocking reads only). */
	private static final class ReplayedInputStream extends ServletInputStream {

		private final InputStream body;

		private boolean finished;

		ReplayedInputStream(InputStream body) {
			this.body = body;
		}

		@Override
		public int read() throws IOException {
			int b = this.body.read();
			this.finished = b < 0;
			return b;
		}

		@Override
		public int read(byte[] b, int off, int len) throws IOException {
			int n = this.body.read(b, off, len);
			this.finished = n < 0;
			return n;
		}

		@Override
		public boolean isFinished() {
			return this.finished;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener listener) {
			throw new UnsupportedOperationException("the body read ahead is read blocking");
		}

	}

}
