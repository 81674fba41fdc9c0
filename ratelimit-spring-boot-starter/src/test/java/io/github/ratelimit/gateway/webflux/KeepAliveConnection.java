package io.github.ratelimit.gateway.webflux;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * One plain-socket HTTP/1.1 keep-alive connection, as a load tool or a browser holds one: requests are written as
 * given (one or several in a single write, that is pipelined), and responses are read one at a time, each with a
 * timeout, so a response that never comes is seen as such instead of blocking the test.
 */
final class KeepAliveConnection implements Closeable {

	private final Socket socket;

	private final OutputStream out;

	private final InputStream in;

	private final int port;

	/**
	 * Opens a connection to 127.0.0.1.
	 * @param port the server's port
	 * @param readTimeout the longest wait for each response (whole milliseconds)
	 */
	KeepAliveConnection(int port, Duration readTimeout) {
		try {
			this.socket = new Socket(InetAddress.getLoopbackAddress(), port);
			this.socket.setTcpNoDelay(true);
			this.socket.setSoTimeout((int) readTimeout.toMillis());
			this.out = this.socket.getOutputStream();
			this.in = new BufferedInputStream(this.socket.getInputStream());
			this.port = port;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * A bodyless {@code GET} keeping the connection open.
	 * @param target the request target, e.g. {@code /a/x}
	 * @param headerLines header lines such as {@code X-API-Key: k}
	 * @return the request's bytes as text
	 */
	String get(String target, String... headerLines) {
		StringBuilder request = new StringBuilder("GET ").append(target).append(" HTTP/1.1\r\n")
			.append("Host: 127.0.0.1:").append(this.port).append("\r\n");
		for (String line : headerLines) {
			request.append(line).append("\r\n");
		}
		return request.append("\r\n").toString();
	}

	/**
	 * Writes requests in one write (pipelined when there are several).
	 * @param requests requests from {@link #get}
	 */
	void send(String... requests) {
		try {
			this.out.write(String.join("", requests).getBytes(StandardCharsets.ISO_8859_1));
			this.out.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Reads the next response whole (a {@code Content-Length} or chunked body).
	 * @return its status code, or {@code -1} if nothing came within the read timeout (the connection still open)
	 * @throws UncheckedIOException if the connection closed or broke
	 */
	int readStatus() {
		try {
			String head = readHead();
			if (head == null) {
				return -1;
			}
			int status = Integer.parseInt(head.substring(9, 12));
			long length = 0;
			boolean chunked = false;
			for (String line : head.split("\r\n")) {
				String lower = line.toLowerCase(Locale.ROOT);
				if (lower.startsWith("content-length:")) {
					length = Long.parseLong(lower.substring(15).strip());
				}
				else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
					chunked = true;
				}
			}
			if (chunked) {
				skipChunks();
			}
			else {
				skip(length);
			}
			return status;
		}
		catch (SocketTimeoutException ex) {
			return -1;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private @Nullable String readHead() throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream(256);
		int matched = 0;
		while (matched < 4) {
			int b;
			try {
				b = this.in.read();
			}
			catch (SocketTimeoutException ex) {
				if (head.size() == 0) {
					return null;
				}
				throw ex;
			}
			if (b < 0) {
				throw new EOFException("connection closed after " + head.size() + " bytes of a response head");
			}
			head.write(b);
			matched = (b == ((matched % 2 == 0) ? '\r' : '\n')) ? matched + 1 : ((b == '\r') ? 1 : 0);
		}
		return head.toString(StandardCharsets.ISO_8859_1);
	}

	private void skipChunks() throws IOException {
		while (true) {
			String sizeLine = readLine();
			int semicolon = sizeLine.indexOf(';');
			long size = Long.parseLong((semicolon >= 0) ? sizeLine.substring(0, semicolon) : sizeLine, 16);
			if (size == 0) {
				while (!readLine().isEmpty()) {
					// trailer fields
				}
				return;
			}
			skip(size);
			readLine();
		}
	}

	private String readLine() throws IOException {
		StringBuilder line = new StringBuilder();
		int b;
		while ((b = this.in.read()) != '\n') {
			if (b < 0) {
				throw new EOFException("connection closed in a chunked body");
			}
			if (b != '\r') {
				line.append((char) b);
			}
		}
		return line.toString().strip();
	}

	private void skip(long length) throws IOException {
		for (long left = length; left > 0; left--) {
			if (this.in.read() < 0) {
				throw new EOFException("connection closed in a body");
			}
		}
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// nothing left to do with a connection that will not close
		}
	}

}
