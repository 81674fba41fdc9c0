package io.github.ratelimit.frontends;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.github.ratelimit.frontends.FrontEnd.Gateway;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.test.OpenRequests;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Both front ends keep the same promises: every row of the usage page's "What a request is charged" table
 * ({@code src/docs/reference/usage-limits.md}) and of the failure policy's table ({@code failure-policy.md}), through
 * a real gateway of each front end ({@link FrontEnd}) over the same real Redis and the same upstream
 * ({@link ChargeUpstream}). A row is the upstream's answer (and what the client does) and what it must leave: the
 * client's bucket as read from Redis after the exchange, or what the client gets while Redis is down. Each row runs on
 * both front ends with the same expectation, so a difference between them fails here.
 *
 * <p>The expectations of the rows whose usage goes beyond the capacity or the reservation are in one table,
 * {@link #BEYOND}.
 */
class FrontEndsChargeIntegrationTest {

	/**
	 * The chat bucket's level after one request reserving 100 of 1,000 tokens whose answer reports more than it
	 * reserved: {@code too-large} reports {@code 1e30} (more than the capacity), {@code excess} reports 700. The one
	 * place to change when the rule for usage beyond a bucket changes.
	 */
	static final Map<String, Long> BEYOND = Map.of("too-large", 0L, "excess", 300L);

	/** Expected status of a row whose upstream fails: any 5xx. */
	private static final int SERVER_ERROR = -1;

	private static final AtomicLong ids = new AtomicLong();

	private static final TestRedis redis = TestRedis.shared();

	private static final ChargeUpstream upstream = new ChargeUpstream();

	private static final int NO_REDIS_PORT = freePort();

	private static final Map<Redis, Map<FrontEnd, Gateway>> gateways = new EnumMap<>(Redis.class);

	private static final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	static Stream<Arguments> rows() {
		List<Row> rows = List.of(
				// ---- what a request is charged (usage-limits.md), Redis up
				charged("reports its usage (JSON)", "/json/c?answer=json&value=57", 200, Bucket.CHAT, 943),
				charged("reports its usage (header)", "/header/c?answer=header&value=57", 200, Bucket.CHAT, 943),
				charged("reports a fraction, rounded up", "/header/c?answer=header&value=41.2", 200, Bucket.CHAT,
						958),
				charged("reports more than the capacity (too-large)", "/json/c?answer=json&value=1e30", 200,
						Bucket.CHAT, BEYOND.get("too-large")),
				charged("reports more than it reserved (excess)", "/json/c?answer=json&value=700", 200, Bucket.CHAT,
						BEYOND.get("excess")),
				charged("reports its usage in a stream's last event", "/json/c?answer=stream&value=57", 200,
						Bucket.CHAT, 943),
				charged("field missing", "/json/c?answer=json", 200, Bucket.CHAT, 900),
				charged("header missing", "/header/c?answer=header", 200, Bucket.CHAT, 900),
				charged("not a number", "/json/c?answer=json&value=%2257%22", 200, Bucket.CHAT, 900),
				charged("negative", "/json/c?answer=json&value=-5", 200, Bucket.CHAT, 900),
				charged("not JSON", "/json/c?answer=not-json", 200, Bucket.CHAT, 900),
				charged("gzip: read", "/json/c?answer=json&value=57&encoding=gzip", 200, Bucket.CHAT, 943,
						"Accept-Encoding", "gzip"),
				charged("gzip in two members: read", "/json/c?answer=json&value=57&encoding=gzip-members", 200,
						Bucket.CHAT, 943, "Accept-Encoding", "gzip"),
				charged("deflate: read", "/json/c?answer=json&value=57&encoding=deflate", 200, Bucket.CHAT, 943,
						"Accept-Encoding", "deflate"),
				charged("br: not read", "/json/c?answer=json&value=57&encoding=br", 200, Bucket.CHAT, 900,
						"Accept-Encoding", "br"),
				charged("an unknown encoding: not read", "/json/c?answer=json&value=57&encoding=x-unknown", 200,
						Bucket.CHAT, 900, "Accept-Encoding", "x-unknown"),
				charged("never came: the upstream failed", "/json/c?answer=none", SERVER_ERROR, Bucket.CHAT, 900),
				charged("bytes: what was sent", "/bytes/c?answer=bytes&size=1500", 200, Bucket.DOWNLOADS, 8500),
				charged("bytes: never came, none", "/bytes/c?answer=none", SERVER_ERROR, Bucket.DOWNLOADS, 10000),
				new Row("the client went away mid-stream, the stream never reports its usage: the reservation",
						Redis.UP, (gateway, test) -> test.cutShortMidStream(gateway)),
				new Row("the client hangs up, the upstream then reports more than it reserved: the usage", Redis.UP,
						(gateway, test) -> test.hungUpBeforeAnswer(gateway, "/json/c?answer=json&value=700",
								Bucket.CHAT, BEYOND.get("excess"))),
				new Row("the client goes away mid-stream, the usage event comes later: the usage", Redis.UP,
						(gateway, test) -> test.wentAwayMidStream(gateway)),
				charged("count-when holds (401): counted", "/login/c?answer=status&status=401", 401, Bucket.LOGIN,
						2),
				charged("count-when does not hold (200): given back", "/login/c?answer=status&status=200", 200,
						Bucket.LOGIN, 3),
				new Row("count-when, the client hangs up, the upstream then answers 200: given back", Redis.UP,
						(gateway, test) -> test.hungUpBeforeAnswer(gateway, "/login/c?answer=status&status=200",
								Bucket.LOGIN, 3)),
				new Row("count-when, the client hangs up, the upstream then answers 401: counted", Redis.UP,
						(gateway, test) -> test.hungUpBeforeAnswer(gateway, "/login/c?answer=status&status=401",
								Bucket.LOGIN, 2)),
				new Row("a request limit: RateLimit fields, then 429", Redis.UP,
						(gateway, test) -> test.plainRoute(gateway, true)),
				// ---- the failure policy (failure-policy.md), Redis down
				new Row("Redis down, a normal route: the fallback's 200s then 429, no RateLimit fields",
						Redis.DOWN, (gateway, test) -> test.plainRoute(gateway, false)),
				new Row("Redis down, fallback.mode allow: unchecked, no RateLimit fields", Redis.DOWN_ALLOW,
						(gateway, test) -> test.unchecked(gateway)),
				new Row("Redis down, a critical route: 503, Retry-After, temporary-reduced-capacity", Redis.DOWN,
						(gateway, test) -> test.failedClosed(gateway)));
		return rows.stream()
			.flatMap((row) -> Stream.of(FrontEnd.values()).map((frontEnd) -> Arguments.of(row, frontEnd)));
	}

	@ParameterizedTest(name = "{0} on {1}")
	@MethodSource("rows")
	void eachFrontEndKeepsTheRow(Row row, FrontEnd frontEnd) throws Exception {
		Gateway gateway = gateway(row.redis(), frontEnd);
		if (row.redis() == Redis.UP) {
			redis.flushAll();
			OverLimitCache cache = gateway.context().getBean(DefaultLimiterChain.class).overLimitCache();
			if (cache != null) {
				cache.clear();
			}
		}
		row.check().run(gateway, this);
	}

	@AfterAll
	static void stop() {
		gateways.values().forEach((started) -> started.values().forEach(Gateway::stop));
		upstream.stop();
	}

	// ---- the rows' checks

	private static Row charged(String name, String target, int status, Bucket bucket, long level, String... headers) {
		return new Row(name, Redis.UP, (gateway, test) -> {
			long settled = settled(gateway);
			int answered = send(gateway, target, headers).statusCode();
			if (status == SERVER_ERROR) {
				assertThat(answered).isBetween(500, 599);
			}
			else {
				assertThat(answered).isEqualTo(status);
			}
			awaitLevel(gateway, bucket, level, settled);
		});
	}

	private void cutShortMidStream(Gateway gateway) throws IOException {
		long settled = settled(gateway);
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), gateway.port())) {
			socket.setSoTimeout(10_000);
			write(socket, "GET /json/c?answer=held-stream HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: key-one\r\n\r\n");
			String first = readUntilFirstEvent(socket.getInputStream());
			assertThat(first).startsWith("HTTP/1.1 200").contains("data: ");
		}
		awaitLevel(gateway, Bucket.CHAT, 900, settled);
	}

	/**
	 * The client sends its request and hangs up once the upstream has it; the upstream answers (this target's answer)
	 * once the client is gone: the upstream's answer decides what the request costs, whatever the client did (a
	 * login client's attempt by its status, a chat client by the usage reported). On WebFlux the upstream answers
	 * once the gateway has closed the client's connection (the hang-up reached it: its close is what the client then
	 * reads); Tomcat does not watch the connection of a request it is serving, so Server MVC finds the client gone
	 * only when it writes the answer, and the upstream answers as soon as the client has closed.
	 */
	private void hungUpBeforeAnswer(Gateway gateway, String target, Bucket bucket, long level) throws IOException {
		String id = nextId();
		long settled = settled(gateway);
		try (Socket socket = OpenRequests.sendGet(gateway.port(), target + "&held=true&id=" + id, "key-one")) {
			await().pollInterval(Duration.ofMillis(10)).atMost(10, TimeUnit.SECONDS).until(() -> upstream.received(id));
			if (gateway.frontEnd() == FrontEnd.WEBFLUX) {
				socket.shutdownOutput();
				assertThat(closedByGateway(socket)).as("the gateway closes the connection of a client gone").isTrue();
			}
		}
		upstream.release(id);
		awaitLevel(gateway, bucket, level, settled);
	}

	/**
	 * A chat client reads the first event of a stream and goes away; the event that reports the usage (700, more
	 * than the 100 reserved) comes once it has gone: charged the usage on both front ends. On WebFlux the usage event
	 * comes once the gateway has closed the client's connection; on Server MVC (which finds the client gone only when
	 * a write to it fails) once the upstream has sent 64 KB more after the client closed (a write to a connection the
	 * client has reset fails), or has found the gateway gone.
	 */
	private void wentAwayMidStream(Gateway gateway) throws IOException {
		String id = nextId();
		long settled = settled(gateway);
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), gateway.port())) {
			socket.setSoTimeout(10_000);
			write(socket, "GET /json/c?answer=released-stream&value=700&id=" + id
					+ " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: key-one\r\n\r\n");
			String first = readUntilFirstEvent(socket.getInputStream());
			assertThat(first).startsWith("HTTP/1.1 200").contains("data: ");
			if (gateway.frontEnd() == FrontEnd.WEBFLUX) {
				socket.shutdownOutput();
				assertThat(closedByGatewayAfterReading(socket)).as("the gateway closes the connection of a client gone")
					.isTrue();
			}
		}
		int sent = upstream.comments(id);
		await().pollInterval(Duration.ofMillis(10))
			.atMost(10, TimeUnit.SECONDS)
			.until(() -> upstream.comments(id) >= sent + 64 || upstream.abandoned(id));
		upstream.release(id);
		awaitLevel(gateway, Bucket.CHAT, BEYOND.get("excess"), settled);
	}

	/** Whether the gateway closed this connection before its read timeout, whatever it sent before closing it. */
	private static boolean closedByGatewayAfterReading(Socket socket) throws IOException {
		byte[] buffer = new byte[8192];
		try {
			while (socket.getInputStream().read(buffer) >= 0) {
				// what the gateway sent before it saw the client go
			}
			return true;
		}
		catch (SocketException ex) { // closed with a reset
			return true;
		}
	}

	/** Whether the gateway closed this connection (without an answer) before its read timeout. */
	private static boolean closedByGateway(Socket socket) throws IOException {
		try {
			return socket.getInputStream().read() < 0;
		}
		catch (SocketException ex) { // closed with a reset
			return true;
		}
	}

	/** The {@code plain} route (2 requests an hour): two admitted, the third refused with a {@code Retry-After}. */
	private void plainRoute(Gateway gateway, boolean redisUp) {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> admitted = send(gateway, "/plain/c?answer=status&status=200");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit").isPresent()).isEqualTo(redisUp);
			assertThat(admitted.headers().firstValue("RateLimit-Policy").isPresent()).isEqualTo(redisUp);
		}
		HttpResponse<String> refused = send(gateway, "/plain/c?answer=status&status=200");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(refused.headers().firstValue("RateLimit").isPresent()).isEqualTo(redisUp);
		if (redisUp) {
			assertThat(read(gateway, Bucket.PLAIN).remaining()).isZero();
		}
	}

	private void unchecked(Gateway gateway) {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> admitted = send(gateway, "/plain/c?answer=status&status=200");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit")).isEmpty();
			assertThat(admitted.headers().firstValue("RateLimit-Policy")).isEmpty();
		}
	}

	private void failedClosed(Gateway gateway) {
		int received = upstream.received();
		HttpResponse<String> refused = send(gateway, "/otp/c?answer=status&status=200");
		assertThat(refused.statusCode()).isEqualTo(503);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(refused.body()).contains(RateLimitProblems.TEMPORARY_REDUCED_CAPACITY);
		assertThat(upstream.received()).isEqualTo(received);
	}

	/**
	 * The settlements a gateway has completed so far ({@link Settlements}), taken before a row's request.
	 * @param gateway the gateway
	 * @return a count
	 */
	private static long settled(Gateway gateway) {
		return gateway.context().getBean(Settlements.class).ended();
	}

	/**
	 * Wait for the settlement of the row's one request (the one more than {@code before}) to be over, then check that
	 * the bucket holds this many whole tokens (a refill of 1 allowed): its settlement was the last thing to change it.
	 */
	private static void awaitLevel(Gateway gateway, Bucket bucket, long expected, long before) {
		Settlements settlements = gateway.context().getBean(Settlements.class);
		await().pollInterval(Duration.ofMillis(10))
			.atMost(15, TimeUnit.SECONDS)
			.until(() -> settlements.ended() > before);
		assertThat(settlements.ended()).as("settlements of the row's request").isEqualTo(before + 1);
		assertThat(read(gateway, bucket).remaining()).isBetween(expected, expected + 1);
	}

	/** A bucket of the tests' client, read from Redis without consuming. */
	private static LimitStatus read(Gateway gateway, Bucket bucket) {
		PlanLimits limits = gateway.context().getBean(LimitResolver.class).limitsFor(bucket.plan, bucket.group);
		ClientKey client = bucket.plan.equals("free")
				? new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash("key-one"), "free")
				: new ClientKey(ClientKey.Kind.IP, "127.0.0.1", bucket.plan);
		return gateway.context()
			.getBean(RateLimitStore.class)
			.tryConsume(client, limits, Cost.NONE)
			.orTimeout(10, TimeUnit.SECONDS)
			.join()
			.statuses()
			.stream()
			.filter((status) -> !bucket.usage || status.limit().isUsage())
			.findFirst()
			.orElseThrow();
	}

	// ---- gateways and HTTP

	/** A request's id, for the upstream to tell when it has it, and to answer it once released. */
	private static String nextId() {
		return Long.toString(ids.incrementAndGet());
	}

	private static synchronized Gateway gateway(Redis state, FrontEnd frontEnd) {
		return gateways.computeIfAbsent(state, (s) -> new EnumMap<>(FrontEnd.class))
			.computeIfAbsent(frontEnd, (f) -> f.start(state.properties()));
	}

	private static HttpResponse<String> send(Gateway gateway, String target, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + target))
			.timeout(Duration.ofSeconds(30))
			.header("X-API-Key", "key-one");
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			return http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.ISO_8859_1));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void write(Socket socket, String request) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write(request.getBytes(StandardCharsets.US_ASCII));
		out.flush();
	}

	/** What a connection received up to the first event's end (the head's blank line passed): the head and it. */
	private static String readUntilFirstEvent(InputStream in) throws IOException {
		StringBuilder received = new StringBuilder();
		byte[] buffer = new byte[1024];
		while (true) {
			int read = in.read(buffer);
			if (read < 0) {
				throw new IOException("closed before the first event: " + received);
			}
			received.append(new String(buffer, 0, read, StandardCharsets.US_ASCII));
			int headEnd = received.indexOf("\r\n\r\n");
			if (headEnd >= 0 && received.indexOf("\n\n", headEnd + 4) >= 0) {
				return received.toString();
			}
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** One row of a table: its name, the Redis its gateways use, and what it checks through one gateway. */
	record Row(String name, Redis redis, Check check) {

		@Override
		public String toString() {
			return this.name;
		}

	}

	@FunctionalInterface
	interface Check {

		void run(Gateway gateway, FrontEndsChargeIntegrationTest test) throws Exception;

	}

	/** The Redis of a row's gateways: the shared test Redis, or none (a port where nothing listens). */
	enum Redis {

		UP, DOWN, DOWN_ALLOW;

		Map<String, String> properties() {
			Map<String, String> properties = new HashMap<>();
			properties.put("upstream.uri", upstream.uri());
			properties.put("spring.data.redis.host", (this == UP) ? redis.host() : "127.0.0.1");
			properties.put("spring.data.redis.port", Integer.toString((this == UP) ? redis.port() : NO_REDIS_PORT));
			if (this == DOWN_ALLOW) {
				properties.put("ratelimit.fallback.mode", "allow");
			}
			return properties;
		}

	}

	/** A bucket of the tests' client: its plan and group, and whether it is the group's usage limit. */
	enum Bucket {

		CHAT("free", "chat", true), DOWNLOADS("free", "downloads", true), LOGIN("anonymous", "login", false),
		PLAIN("anonymous", "plain", false);

		final String plan;

		final String group;

		final boolean usage;

		Bucket(String plan, String group, boolean usage) {
			this.plan = plan;
			this.group = group;
			this.usage = usage;
		}

	}

}
