package io.github.ratelimit.accuracy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The keep-alive harness of issue 27 (run with {@code src/benchmarks/keep-alive}): plain-socket clients, each on one
 * HTTP/1.1 keep-alive connection, send one bodyless request, read its response whole, send the next, back to back,
 * until the requested number of requests has been sent (or the time limit is reached), and count every request
 * whose response did not begin within the read timeout. A connection whose response is missing is closed and a new
 * one opened; a connection the server announces it will close ({@code Connection: close}) is replaced at once.
 *
 * <p>Prints one {@code RESULT} line ({@code label requests answered unanswered ... seconds}) and exits with status 1
 * if any request was unanswered, if a connection broke without an answer, or if fewer requests than asked were sent
 * within the time limit.
 *
 * <p>Options: {@code --port P} (required), {@code --label NAME}, {@code --requests N} (2,000,000),
 * {@code --connections N} (4), {@code --target PATH} ({@code /api/search/x}), {@code --api-key KEY}
 * ({@code demo-free-key}), {@code --read-timeout-ms N} (5000), {@code --max-seconds N} (1500).
 */
public final class KeepAliveRun {

	private final int port;

	private final String label;

	private final long requests;

	private final int connections;

	private final byte[] request;

	private final int readTimeoutMillis;

	private final long deadlineNanos;

	private final AtomicLong claimed = new AtomicLong();

	private final LongAdder answered = new LongAdder();

	private final LongAdder admitted = new LongAdder();

	private final LongAdder denied = new LongAdder();

	private final LongAdder otherStatus = new LongAdder();

	private final LongAdder unanswered = new LongAdder();

	private final LongAdder broken = new LongAdder();

	private final LongAdder reconnects = new LongAdder();

	private final ConcurrentLinkedQueue<String> incidents = new ConcurrentLinkedQueue<>();

	private KeepAliveRun(int port, String label, long requests, int connections, String target, String apiKey,
			int readTimeoutMillis, long maxSeconds) {
		this.port = port;
		this.label = label;
		this.requests = requests;
		this.connections = connections;
		this.request = ("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nX-API-Key: " + apiKey
				+ "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
		this.readTimeoutMillis = readTimeoutMillis;
		this.deadlineNanos = System.nanoTime() + Duration.ofSeconds(maxSeconds).toNanos();
	}

	public static void main(String[] args) throws Exception {
		int port = -1;
		String label = "gateway";
		long requests = 2_000_000;
		int connections = 4;
		String target = "/api/search/x";
		String apiKey = "demo-free-key";
		int readTimeoutMillis = 5000;
		long maxSeconds = 1500;
		for (int i = 0; i < args.length; i += 2) {
			String value = args[i + 1];
			switch (args[i]) {
				case "--port" -> port = Integer.parseInt(value);
				case "--label" -> label = value;
				case "--requests" -> requests = Long.parseLong(value);
				case "--connections" -> connections = Integer.parseInt(value);
				case "--target" -> target = value;
				case "--api-key" -> apiKey = value;
				case "--read-timeout-ms" -> readTimeoutMillis = Integer.parseInt(value);
				case "--max-seconds" -> maxSeconds = Long.parseLong(value);
				default -> throw new IllegalArgumentException("unknown option " + args[i]);
			}
		}
		if (port <= 0) {
			throw new IllegalArgumentException("--port is required");
		}
		System.exit(new KeepAliveRun(port, label, requests, connections, target, apiKey, readTimeoutMillis,
				maxSeconds).run());
	}

	private int run() throws InterruptedException {
		long start = System.nanoTime();
		List<Thread> threads = new ArrayList<>();
		for (int c = 0; c < this.connections; c++) {
			int id = c;
			Thread thread = new Thread(() -> client(id), "keep-alive-client-" + c);
			thread.start();
			threads.add(thread);
		}
		long lastReport = start;
		for (Thread thread : threads) {
			while (thread.isAlive()) {
				thread.join(1000);
				long now = System.nanoTime();
				if (now - lastReport >= 10_000_000_000L) {
					lastReport = now;
					log(String.format(Locale.ROOT, "%s: %,d sent, %,d answered (%,d 200, %,d 429), %,d unanswered, %.0f s",
							this.label, sent(), this.answered.sum(), this.admitted.sum(), this.denied.sum(),
							this.unanswered.sum(), (now - start) / 1e9));
				}
			}
		}
		double seconds = (System.nanoTime() - start) / 1e9;
		this.incidents.stream().limit(20).forEach(KeepAliveRun::log);
		long sent = sent();
		System.out.printf(Locale.ROOT,
				"RESULT %s requests=%d answered=%d unanswered=%d broken=%d status200=%d status429=%d other=%d "
						+ "reconnects=%d connections=%d seconds=%.1f rate=%.0f%n",
				this.label, sent, this.answered.sum(), this.unanswered.sum(), this.broken.sum(), this.admitted.sum(),
				this.denied.sum(), this.otherStatus.sum(), this.reconnects.sum(), this.connections, seconds,
				sent / seconds);
		if (sent < this.requests) {
			log(this.label + ": only " + sent + " of " + this.requests + " requests sent within the time limit");
			return 1;
		}
		return (this.unanswered.sum() == 0 && this.broken.sum() == 0 && this.otherStatus.sum() == 0) ? 0 : 1;
	}

	private long sent() {
		return Math.min(this.claimed.get(), this.requests);
	}

	private void client(int id) {
		Connection connection = null;
		long onConnection = 0;
		int previousStatus = 0;
		while (System.nanoTime() < this.deadlineNanos) {
			long n = this.claimed.getAndIncrement();
			if (n >= this.requests) {
				break;
			}
			try {
				if (connection == null) {
					connection = new Connection(this.port, this.readTimeoutMillis);
					onConnection = 0;
					previousStatus = 0;
				}
				onConnection++;
				connection.send(this.request);
				Answer answer = connection.read();
				if (answer == null) {
					this.unanswered.increment();
					this.incidents.add(String.format(Locale.ROOT,
							"%s: connection %d, request %d on it: no response within %d ms (previous response %d)",
							this.label, id, onConnection, this.readTimeoutMillis, previousStatus));
					connection.close();
					connection = null;
					this.reconnects.increment();
					continue;
				}
				this.answered.increment();
				switch (answer.status()) {
					case 200 -> this.admitted.increment();
					case 429 -> this.denied.increment();
					default -> this.otherStatus.increment();
				}
				previousStatus = answer.status();
				if (answer.closing()) {
					connection.close();
					connection = null;
					this.reconnects.increment();
				}
			}
			catch (IOException ex) {
				this.broken.increment();
				this.incidents.add(String.format(Locale.ROOT, "%s: connection %d, request %d on it: %s", this.label, id,
						onConnection, ex));
				if (connection != null) {
					connection.close();
					connection = null;
				}
				this.reconnects.increment();
			}
		}
		if (connection != null) {
			connection.close();
		}
	}

	private static void log(String line) {
		System.err.println("[keep-alive] " + line);
	}

	/**
	 * A response read whole.
	 * @param status its status code
	 * @param closing whether it announced {@code Connection: close}
	 */
	private record Answer(int status, boolean closing) {
	}

	/** One keep-alive connection with its own read buffer. */
	private static final class Connection {

		private final Socket socket;

		private final OutputStream out;

		private final InputStream in;

		private final byte[] buffer = new byte[16 * 1024];

		private int position;

		private int limit;

		Connection(int port, int readTimeoutMillis) throws IOException {
			this.socket = new Socket(InetAddress.getLoopbackAddress(), port);
			this.socket.setTcpNoDelay(true);
			this.socket.setSoTimeout(readTimeoutMillis);
			this.out = this.socket.getOutputStream();
			this.in = this.socket.getInputStream();
		}

		void send(byte[] request) throws IOException {
			this.out.write(request);
			this.out.flush();
		}

		/** The next response, or {@code null} if none began within the read timeout. */
		Answer read() throws IOException {
			if (this.position == this.limit) {
				try {
					fill();
				}
				catch (SocketTimeoutException ex) {
					return null;
				}
			}
			String head = readHead();
			int status = Integer.parseInt(head.substring(9, 12));
			long length = 0;
			boolean chunked = false;
			boolean closing = false;
			for (String line : head.split("\r\n")) {
				String lower = line.toLowerCase(Locale.ROOT);
				if (lower.startsWith("content-length:")) {
					length = Long.parseLong(lower.substring(15).strip());
				}
				else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
					chunked = true;
				}
				else if (lower.startsWith("connection:") && lower.contains("close")) {
					closing = true;
				}
			}
			if (chunked) {
				skipChunks();
			}
			else {
				skip(length);
			}
			return new Answer(status, closing);
		}

		private void fill() throws IOException {
			int n = this.in.read(this.buffer);
			if (n < 0) {
				throw new IOException("connection closed by the server");
			}
			this.position = 0;
			this.limit = n;
		}

		private int next() throws IOException {
			if (this.position == this.limit) {
				fill();
			}
			return this.buffer[this.position++] & 0xff;
		}

		private String readHead() throws IOException {
			StringBuilder head = new StringBuilder(256);
			int matched = 0;
			while (matched < 4) {
				int b = next();
				head.append((char) b);
				matched = (b == ((matched % 2 == 0) ? '\r' : '\n')) ? matched + 1 : ((b == '\r') ? 1 : 0);
			}
			return head.toString();
		}

		private String readLine() throws IOException {
			StringBuilder line = new StringBuilder();
			int b;
			while ((b = next()) != '\n') {
				if (b != '\r') {
					line.append((char) b);
				}
			}
			return line.toString().strip();
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

		private void skip(long length) throws IOException {
			long left = length;
			while (left > 0) {
				if (this.position == this.limit) {
					fill();
				}
				int n = (int) Math.min(left, this.limit - this.position);
				this.position += n;
				left -= n;
			}
		}

		void close() {
			try {
				this.socket.close();
			}
			catch (IOException ex) {
				// nothing left to do with a connection that will not close
			}
		}

	}

}
