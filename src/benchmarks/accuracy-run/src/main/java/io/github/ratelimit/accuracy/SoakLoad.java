package io.github.ratelimit.accuracy;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The soak's traffic: a steady number of clients, each limited by its own IP address (sent as the one
 * {@code X-Forwarded-For} entry a trusted proxy would write), each sending open loop (a request is sent when due,
 * whether or not earlier ones have been answered) at {@code overload} times its plan's refill rate, alternating between
 * the gateway instances. Clients churn: each lives a random time between {@code minLifetime} and {@code maxLifetime},
 * then stops and a new client (a new address, so new bucket keys) takes its place at once.
 *
 * <p>Requests go over Reactor Netty with at most {@value #MAX_CONNECTIONS} connections per gateway; a request that is
 * due while all are busy waits for one (its round trip counts from when it was due), so that a stalled gateway on a
 * busy machine is not answered with thousands of new connections, which would make its file descriptor count
 * measure the load generator rather than the gateway.
 */
final class SoakLoad {

	/** Connections per gateway. */
	static final int MAX_CONNECTIONS = 64;

	/** The header field a decision of the shared limiter carries (none for a local fallback decision). */
	static final String RATE_LIMIT_HEADER = "RateLimit";

	/** Status recorded for a request that got no HTTP answer (refused, reset, timed out). */
	static final int NO_ANSWER = -1;

	private final List<URI> gateways;

	private final String path;

	private final int activeClients;

	private final long intervalMicros;

	private final long minLifetimeMicros;

	private final long maxLifetimeMicros;

	private final Random random;

	private final List<SoakClient> clients = Collections.synchronizedList(new ArrayList<>());

	private final Duration requestTimeout;

	private final ConnectionProvider connections;

	private final HttpClient http;

	private final Phaser inFlight = new Phaser(1);

	private volatile boolean stopped;

	/**
	 * Prepare the load.
	 * @param gateways each instance's API base URI, e.g. {@code http://127.0.0.1:8080}
	 * @param path the path every client requests (a route limited by client IP)
	 * @param activeClients clients sending at any time
	 * @param intervalMicros time between one client's requests (µs)
	 * @param minLifetime shortest life of a client
	 * @param maxLifetime longest life of a client
	 * @param seed seed of the lifetimes and phases
	 * @param requestTimeout longest wait for one answer (connection included) before it counts as unanswered
	 */
	SoakLoad(List<URI> gateways, String path, int activeClients, long intervalMicros, Duration minLifetime,
			Duration maxLifetime, long seed, Duration requestTimeout) {
		this.requestTimeout = requestTimeout;
		this.connections = ConnectionProvider.builder("soak")
			.maxConnections(MAX_CONNECTIONS)
			.pendingAcquireMaxCount(-1)
			.pendingAcquireTimeout(requestTimeout)
			.build();
		this.gateways = List.copyOf(gateways);
		this.path = path;
		this.activeClients = activeClients;
		this.intervalMicros = intervalMicros;
		this.minLifetimeMicros = minLifetime.toNanos() / 1000;
		this.maxLifetimeMicros = maxLifetime.toNanos() / 1000;
		this.random = new Random(seed);
		this.http = HttpClient.create(this.connections).responseTimeout(requestTimeout);
	}

	/**
	 * Send from {@code startMicros} until {@code endMicros} (wall clock, µs since the epoch), then wait for the last
	 * answers. The first clients have a random part of a lifetime left, so that clients stop and start from the first
	 * minute on.
	 * @param startMicros when the first requests are due
	 * @param endMicros when the last client stops
	 */
	void run(long startMicros, long endMicros) {
		PriorityQueue<Due> queue = new PriorityQueue<>();
		for (int i = 0; i < this.activeClients; i++) {
			long remaining = this.minLifetimeMicros / 4
					+ (long) (this.random.nextDouble() * (this.maxLifetimeMicros - this.minLifetimeMicros / 4));
			SoakClient client = newClient(startMicros, startMicros + remaining, endMicros);
			queue.add(new Due(client.firstDueMicros(), client, 0));
		}
		while (!queue.isEmpty() && !this.stopped) {
			Due due = queue.poll();
			long wait = due.micros() - GatewayInstance.nowMicros();
			if (wait > 0) {
				LockSupport.parkNanos(wait * 1000);
			}
			send(due.client(), due.index());
			long next = due.client().firstDueMicros() + (due.index() + 1) * this.intervalMicros;
			if (next < due.client().stopMicros()) {
				queue.add(new Due(next, due.client(), due.index() + 1));
			}
			else if (due.client().stopMicros() < endMicros) {
				long start = due.client().stopMicros();
				long life = this.minLifetimeMicros
						+ (long) (this.random.nextDouble() * (this.maxLifetimeMicros - this.minLifetimeMicros));
				SoakClient successor = newClient(start, start + life, endMicros);
				queue.add(new Due(successor.firstDueMicros(), successor, 0));
			}
		}
		this.inFlight.arriveAndDeregister();
		try {
			this.inFlight.awaitAdvanceInterruptibly(0, this.requestTimeout.toSeconds() + 5, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			// answers still missing are recorded as NO_ANSWER by the analysis (never answered)
		}
	}

	/** Stop sending (Ctrl-C). */
	void stop() {
		this.stopped = true;
	}

	/**
	 * Every client that has started so far.
	 * @return a copy, in order of start
	 */
	List<SoakClient> clients() {
		synchronized (this.clients) {
			return new ArrayList<>(this.clients);
		}
	}

	private SoakClient newClient(long startMicros, long stopMicros, long endMicros) {
		int id = this.clients.size();
		long phase = (long) (this.random.nextDouble() * this.intervalMicros);
		SoakClient client = new SoakClient(id, address(id), startMicros + phase, Math.min(stopMicros, endMicros),
				stopMicros >= endMicros);
		this.clients.add(client);
		return client;
	}

	/** A distinct address per client in 10.0.0.0/8, from its number. */
	static String address(int id) {
		int n = id + 1;
		return "10." + ((n >> 16) & 0xff) + "." + ((n >> 8) & 0xff) + "." + (n & 0xff);
	}

	private void send(SoakClient client, int index) {
		int instance = (client.id() + index) % this.gateways.size();
		String uri = this.gateways.get(instance).resolve(this.path).toString();
		this.inFlight.register();
		long sent = GatewayInstance.nowMicros();
		this.http.headers((h) -> h.set("X-Forwarded-For", client.address()))
			.get()
			.uri(uri)
			.responseSingle((response, body) -> body.asByteArray()
				.defaultIfEmpty(new byte[0])
				.map((bytes) -> new SoakClient.Response(sent, GatewayInstance.nowMicros(), response.status().code(),
						instance, response.responseHeaders().contains(RATE_LIMIT_HEADER))))
			.timeout(this.requestTimeout.plusSeconds(5))
			.onErrorResume((error) -> Mono
				.just(new SoakClient.Response(sent, GatewayInstance.nowMicros(), NO_ANSWER, instance, false)))
			.subscribe((response) -> {
				client.record(response);
				this.inFlight.arriveAndDeregister();
			});
	}

	/** Stop the HTTP client's threads. */
	void close() {
		this.connections.dispose();
	}

	private record Due(long micros, SoakClient client, int index) implements Comparable<Due> {

		@Override
		public int compareTo(Due other) {
			return Long.compare(this.micros, other.micros);
		}

	}

}
