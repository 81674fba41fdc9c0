package io.github.ratelimit.gateway.mvc;

import java.io.IOException;
import java.nio.ByteBuffer;

import io.github.ratelimit.gateway.route.UsageMeter;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.util.MultiValueMap;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The upstream's response with its answer shown to a {@link UsageMeter} as it is written: the status and header
 * fields when writing starts, then every byte written to the servlet output stream, read in place, never copied nor
 * held; the meter is ended once writing is over (complete, or cut short by an exception: the client gone, an upstream
 * read error).
 */
final class UsageMeteringResponse implements ServerResponse {

	private final ServerResponse response;

	private final UsageMeter meter;

	UsageMeteringResponse(ServerResponse response, UsageMeter meter) {
		this.response = response;
		this.meter = meter;
	}

	@Override
	public HttpStatusCode statusCode() {
		return this.response.statusCode();
	}

	@Override
	public HttpHeaders headers() {
		return this.response.headers();
	}

	@Override
	public MultiValueMap<String, Cookie> cookies() {
		return this.response.cookies();
	}

	@Override
	public @Nullable ModelAndView writeTo(HttpServletRequest request, HttpServletResponse servletResponse,
			Context context) throws ServletException, IOException {
		HttpHeaders headers = this.response.headers();
		this.meter.answer(this.response.statusCode().value(), headers::getFirst,
				headers.getFirst(HttpHeaders.CONTENT_TYPE));
		boolean complete = false;
		try {
			ModelAndView view = this.response.writeTo(request, new Metered(servletResponse, this.meter), context);
			complete = true;
			return view;
		}
		finally {
			this.meter.end(complete);
		}
	}

	/** The servlet response, its output stream shown to the meter. */
	private static final class Metered extends HttpServletResponseWrapper {

		private final UsageMeter meter;

		private @Nullable ServletOutputStream stream;

		Metered(HttpServletResponse response, UsageMeter meter) {
			super(response);
			this.meter = meter;
		}

		@Override
		public ServletOutputStream getOutputStream() throws IOException {
			if (this.stream == null) {
				this.stream = new MeteredStream(super.getOutputStream(), this.meter);
			}
			return this.stream;
		}

	}

	/** An output stream that shows every byte written to the meter, then writes it. */
	private static final class MeteredStream extends ServletOutputStream {

		private final ServletOutputStream out;

		private final UsageMeter meter;

		MeteredStream(ServletOutputStream out, UsageMeter meter) {
			this.out = out;
			this.meter = meter;
		}

		@Override
		public void write(int b) throws IOException {
			this.out.write(b);
			this.meter.body(ByteBuffer.wrap(new byte[] { (byte) b }));
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			this.out.write(b, off, len);
			this.meter.body(ByteBuffer.wrap(b, off, len).asReadOnlyBuffer());
		}

		@Override
		public void flush() throws IOException {
			this.out.flush();
		}

		@Override
		public void close() throws IOException {
			this.out.close();
		}

		@Override
		public boolean isReady() {
			return this.out.isReady();
		}

		@Override
		public void setWriteListener(WriteListener listener) {
			this.out.setWriteListener(listener);
		}

	}

}
