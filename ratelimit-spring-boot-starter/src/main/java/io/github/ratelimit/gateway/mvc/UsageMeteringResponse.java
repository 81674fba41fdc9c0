package io.github.ratelimit.gateway.mvc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.gateway.route.UsageMeter;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
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
 * fields as written to the servlet response, when its body starts (or, without a body, when writing is over), then
 * every byte written to the servlet output stream, read in place, never copied nor held. The meter is ended once
 * writing is over: when {@link #writeTo} returns (complete) or throws (cut short: the client gone, an upstream read
 * error); for a response written asynchronously (its body written after {@link #writeTo} returned, on an async
 * dispatch or another thread: {@link ServerResponse#async}, {@link ServerResponse#sse}), when the request's async
 * processing ends: complete, unless it timed out, failed, or a write to the client failed.
 *
 * <p>When a write to the client fails (it has gone) while the rest of the answer may still change the charge
 * ({@link UsageMeter#decided()} is {@code false}: the usage is in a body not read to it yet), the failure is not
 * passed on: Gateway's proxy goes on copying the upstream's answer, which now goes to the meter only, nothing
 * written nor flushed to the client, until the meter has decided (a write then fails, and the proxy closes the
 * upstream's answer) or the answer ends. The upstream's answer decides what the request is charged, as on WebFlux.
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
		Metered metered = new Metered(servletResponse, this.meter);
		boolean returned = false;
		try {
			ModelAndView view = this.response.writeTo(request, metered, context);
			returned = true;
			return view;
		}
		finally {
			if (returned && request.isAsyncStarted()) {
				request.getAsyncContext().addListener(new EndWhenAsyncEnds(metered));
			}
			else {
				metered.end(returned);
			}
		}
	}

	/** Ends the meter when the request's asynchronous processing ends: complete unless it timed out or failed. */
	private record EndWhenAsyncEnds(Metered metered) implements AsyncListener {

		@Override
		public void onComplete(AsyncEvent event) {
			this.metered.end(true); // a no-op after onTimeout or onError ended it
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			this.metered.end(false);
		}

		@Override
		public void onError(AsyncEvent event) {
			this.metered.end(false);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this); // a new cycle: listen to it too
		}

	}

	/**
	 * The servlet response, its output stream shown to the meter; tells the meter its status and header fields once
	 * (when the body starts, else when writing is over).
	 */
	private static final class Metered extends HttpServletResponseWrapper {

		private final UsageMeter meter;

		private final AtomicBoolean answered = new AtomicBoolean();

		/** Whether a write to the client failed: the answer was cut short, whatever the writer did next. */
		private volatile boolean failed;

		private @Nullable ServletOutputStream stream;

		Metered(HttpServletResponse response, UsageMeter meter) {
			super(response);
			this.meter = meter;
		}

		@Override
		public ServletOutputStream getOutputStream() throws IOException {
			if (this.stream == null) {
				this.stream = new MeteredStream(super.getOutputStream(), this);
			}
			return this.stream;
		}

		/** Tell the meter the status and header fields as written (a copy: read once the response may be reused). */
		void answer() {
			if (this.answered.compareAndSet(false, true)) {
				HttpHeaders headers = new HttpHeaders();
				for (String name : getHeaderNames()) {
					headers.addAll(name, List.copyOf(getHeaders(name)));
				}
				this.meter.answer(getStatus(), headers, getContentType());
			}
		}

		/** Writing is over: end the meter. */
		void end(boolean complete) {
			answer();
			this.meter.end(complete && !this.failed);
		}

		void failed() {
			this.failed = true;
		}

	}

	/** An output stream that shows every byte written to the meter, then writes it. */
	private static final class MeteredStream extends ServletOutputStream {

		private final ServletOutputStream out;

		private final Metered response;

		MeteredStream(ServletOutputStream out, Metered response) {
			this.out = out;
			this.response = response;
		}

		@Override
		public void write(int b) throws IOException {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			this.response.answer();
			UsageMeter meter = this.response.meter;
			if (this.response.failed) {
				meter.body(ByteBuffer.wrap(b, off, len).asReadOnlyBuffer());
				if (meter.decided()) {
					throw new IOException("The client has gone and the answer's usage is read");
				}
				return; // the client has gone: the upstream's answer read into the meter only
			}
			try {
				this.out.write(b, off, len);
			}
			catch (IOException ex) {
				this.response.failed();
				meter.body(ByteBuffer.wrap(b, off, len).asReadOnlyBuffer());
				readOnOrThrow(ex);
				return;
			}
			catch (RuntimeException ex) {
				this.response.failed();
				throw ex;
			}
			meter.body(ByteBuffer.wrap(b, off, len).asReadOnlyBuffer());
		}

		@Override
		public void flush() throws IOException {
			if (this.response.failed) {
				return; // nothing to flush to a client gone
			}
			try {
				this.out.flush();
			}
			catch (IOException ex) {
				this.response.failed();
				readOnOrThrow(ex);
			}
			catch (RuntimeException ex) {
				this.response.failed();
				throw ex;
			}
		}

		/**
		 * A write to the client failed (it has gone): rethrow, so that the proxy stops copying and closes the
		 * upstream's answer, unless the rest of the answer may change the charge ({@link UsageMeter#decided()}); then
		 * the proxy's copy goes on, into the meter only, until the meter has decided or the answer ends.
		 */
		private void readOnOrThrow(IOException ex) throws IOException {
			if (this.response.meter.decided()) {
				throw ex;
			}
		}

		@Override
		public void close() throws IOException {
			try {
				this.out.close();
			}
			catch (IOException | RuntimeException ex) {
				this.response.failed();
				throw ex;
			}
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
