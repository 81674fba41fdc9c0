package io.github.ratelimit.gateway.webflux;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An HTTP/1.1 client that sends the request line and header lines exactly as written (like
 * {@code curl --path-as-is}, with repeated header lines kept apart), one connection per request, for tests of what a
 * gateway does with requests other clients would normalise first.
 */
public final class RawHttp {

	private RawHttp() {
	}

	/**
	 * Send one request from a loopback source address and read the whole response ({@code Connection: close}).
	 * @param port the gateway's port
	 * @param sourceIp the client's address (any 127.x.y.z on Linux)
	 * @param method e.g. {@code GET}
	 * @param target the request target, sent byte for byte (ISO-8859-1)
	 * @param headerLines header lines such as {@code X-API-Key: k}, each sent as its own line
	 * @return the response
	 */
	static Response send(int port, String sourceIp, String method, String target, String... headerLines) {
		return Response.parse(exchange(port, sourceIp, method, target, headerLines));
	}

	/**
	 * Send one request like {@link #send} and return the whole response as received: status line, header lines
	 * and body, byte for byte (decoded as UTF-8), for tests that pin a response exactly.
	 * @param port the gateway's port
	 * @param sourceIp the client's address (any 127.x.y.z on Linux)
	 * @param method e.g. {@code GET}
	 * @param target the request target, sent byte for byte (ISO-8859-1)
	 * @param headerLines header lines such as {@code X-API-Key: k}, each sent as its own line
	 * @return the response text, e.g. {@code HTTP/1.1 429 Too Many Requests\r\n...}
	 */
	static String exchange(int port, String sourceIp, String method, String target, String... headerLines) {
		StringBuilder request = new StringBuilder().append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
		request.append("Host: 127.0.0.1:").append(port).append("\r\n");
		for (String line : headerLines) {
			request.append(line).append("\r\n");
		}
		request.append("Content-Length: 0\r\nConnection: close\r\n\r\n");
		try (Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), port, InetAddress.getByName(sourceIp), 0)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			return readAll(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String readAll(InputStream in) throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		in.transferTo(bytes);
		return bytes.toString(StandardCharsets.UTF_8);
	}

	/**
	 * A response.
	 * @param status the status code
	 * @param headers header lines as {@code name: value}
	 * @param body the body (chunked transfer coding not decoded)
	 */
	public record Response(int status, List<String> headers, String body) {

		static Response parse(String text) {
			int end = text.indexOf("\r\n\r\n");
			String head = (end >= 0) ? text.substring(0, end) : text;
			String[] lines = head.split("\r\n");
			int status = Integer.parseInt(lines[0].split(" ")[1]);
			List<String> headers = new ArrayList<>(List.of(lines).subList(1, lines.length));
			return new Response(status, headers, (end >= 0) ? text.substring(end + 4) : "");
		}

		/** The first value of a header, or {@code null}. */
		public String header(String name) {
			String prefix = name.toLowerCase(Locale.ROOT) + ":";
			return this.headers.stream()
				.filter((line) -> line.toLowerCase(Locale.ROOT).startsWith(prefix))
				.map((line) -> line.substring(prefix.length()).strip())
				.findFirst()
				.orElse(null);
		}

	}

}
