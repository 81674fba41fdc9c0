package io.github.ratelimit.accuracy;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.test.KeepAliveConnection;

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
		KeepAliveConnection connection = null;
		long onConnection = 0;
		int previousStatus = 0;
		while (System.nanoTime() < this.deadlineNanos) {
			long n = this.claimed.getAndIncrement();
			if (n >= this.requests) {
				break;
			}
			try {
				if (connection == null) {
					connection = new KeepAliveConnection(this.port, Duration.ofMillis(this.readTimeoutMillis));
					onConnection = 0;
					previousStatus = 0;
				}
				onConnection++;
				connection.send(this.request);
				KeepAliveConnection.Response answer = connection.read();
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
			catch (UncheckedIOException ex) {
				this.broken.increment();
				this.incidents.add(String.format(Locale.ROOT, "%s: connection %d, request %d on it: %s", this.label, id,
						onConnection, ex.getCause()));
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

}
