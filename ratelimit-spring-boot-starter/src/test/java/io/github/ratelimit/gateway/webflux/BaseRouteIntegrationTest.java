package io.github.ratelimit.gateway.webflux;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.github.ratelimit.test.redis.RedisCluster;
import io.github.ratelimit.test.redis.TestRedis;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The base of every route test of the starter (as Spring Cloud Gateway's own {@code BaseWebClientTests}): a real
 * gateway on a random port ({@link GatewayTestApplication}, unless a test names another application in a
 * {@code @SpringBootTest} of its own), buckets in the real {@link TestRedis#shared() test Redis}, and real HTTP in
 * through {@link #client} or the other clients made here. A test picks its configuration with
 * {@code @ActiveProfiles} ({@code gateway-it}, {@code paths-it}, ...) and {@code @TestPropertySource}; tests with the
 * same configuration share one cached context.
 *
 * <p>Every test starts with {@link #emptyBuckets() empty buckets} (Redis flushed, no denial remembered by this
 * instance) and nothing received by the {@link #upstream}. Routes of profile {@code paths-it} lead to that upstream
 * ({@code upstream.uri}); the others end at {@code no://op}.
 *
 * <p>A test with a Redis of its own (one it kills or pauses, a Redis Cluster) registers it with a
 * {@code @DynamicPropertySource} of its own as {@code spring.data.redis.url} or {@code spring.data.redis.cluster.nodes},
 * either of which wins over the host and port set here whatever the order, and overrides {@link #emptyBuckets()};
 * the tests that kill, pause and restart a redis-server extend {@link OwnRedisRouteIntegrationTest}.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
public abstract class BaseRouteIntegrationTest {

	/** The shared test Redis the gateway's buckets are in (unless a test brings a Redis of its own). */
	protected static final TestRedis redis = TestRedis.shared();

	/** The upstream of the {@code paths-it} routes: records the request target of everything it receives. */
	protected static final RecordingUpstream upstream = RecordingUpstream.shared();

	/** The gateway's HTTP port. */
	@LocalServerPort
	protected int port;

	/** The limiter chain's over-limit cache: {@link OverLimitCache#clear() cleared} between tests. */
	protected OverLimitCache overLimitCache;

	/** The application's meters. */
	@Autowired
	protected MeterRegistry meters;

	@Autowired
	void limiterChain(DefaultLimiterChain chain) {
		this.overLimitCache = chain.overLimitCache();
	}

	/** A client from 127.0.0.1, a connection of its own per request; made anew before each test. */
	protected WebTestClient client;

	@DynamicPropertySource
	static void redisAndUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("upstream.uri", upstream::uri);
	}

	@BeforeEach
	final void startFromEmptyBuckets() {
		this.client = clientFrom("127.0.0.1");
		upstream.clear();
		emptyBuckets();
	}

	/**
	 * Empties every bucket before each test: flushes the shared test Redis and forgets the denials this instance
	 * remembers (the buckets are gone, so are they). Overridden by tests with a Redis of their own.
	 */
	protected void emptyBuckets() {
		redis.flushAll();
		this.overLimitCache.clear();
	}

	/**
	 * A client whose connections come from {@code sourceIp} (any 127.x.y.z works on Linux loopback), so the gateway
	 * sees a distinct direct client per address; a connection of its own per request, so no pooled connection is
	 * shared with other tests' contexts; 10 s response timeout.
	 * @param sourceIp the client's address
	 * @return the client
	 */
	protected WebTestClient clientFrom(String sourceIp) {
		HttpClient http = HttpClient.create(ConnectionProvider.newConnection())
			.bindAddress(() -> new InetSocketAddress(sourceIp, 0));
		return WebTestClient.bindToServer(new ReactorClientHttpConnector(http))
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
	}

	/**
	 * A {@link WebClient} for load-style tests, with a connection of its own per request (like
	 * {@link #clientFrom}).
	 * @return the client
	 */
	protected WebClient webClient() {
		return WebClient.builder()
			.clientConnector(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())))
			.baseUrl("http://127.0.0.1:" + this.port)
			.build();
	}

	/**
	 * A {@link WebClient} with pooled connections (Reactor Netty's shared pool), for tests of thousands of requests,
	 * which a connection per request would leave in TIME_WAIT by the thousand.
	 * @return the client
	 */
	protected WebClient pooledWebClient() {
		return WebClient.create("http://127.0.0.1:" + this.port);
	}

	/**
	 * One GET through {@link #client} with an API key.
	 * @param path the path
	 * @param apiKey the {@code X-API-Key} value
	 * @return the response, to assert on
	 */
	protected WebTestClient.ResponseSpec get(String path, String apiKey) {
		return this.client.get().uri(path).header("X-API-Key", apiKey).exchange();
	}

	/**
	 * Sends one request exactly as written (see {@link RawHttp}), from 127.0.0.1.
	 * @param method e.g. {@code GET}
	 * @param target the request target, byte for byte
	 * @param headerLines header lines such as {@code X-API-Key: k}
	 * @return the whole response
	 */
	protected RawHttp.Response send(String method, String target, String... headerLines) {
		return RawHttp.send(this.port, "127.0.0.1", method, target, headerLines);
	}

	/**
	 * Lets real time pass, as a scenario step ("the client waits Retry-After seconds"); never used for
	 * synchronisation, which is done with Awaitility.
	 * @param duration how long
	 */
	protected static void letTimePass(Duration duration) {
		Mono.delay(duration).block();
	}

	/**
	 * A regular expression for a {@code RateLimit} field received after some requests of a test: the policies and
	 * their remaining counts exactly, each policy's {@code t} (seconds until full) the expected value or up to 5
	 * less, the whole seconds a loaded machine may let pass between a test's requests while its buckets refill.
	 * @param expected the field if no time had passed, e.g. {@code "free-search";r=2;t=180}
	 * @return the expression, for {@code matches} or {@code valueMatches}
	 */
	protected static String aboutRateLimit(String expected) {
		java.util.regex.Matcher t = java.util.regex.Pattern.compile(";t=(\\d+)").matcher(expected);
		StringBuilder regex = new StringBuilder();
		int last = 0;
		while (t.find()) {
			regex.append(java.util.regex.Pattern.quote(expected.substring(last, t.start()))).append(";t=(");
			long seconds = Long.parseLong(t.group(1));
			for (long s = seconds; s >= Math.max(0, seconds - 5); s--) {
				regex.append(s).append((s > Math.max(0, seconds - 5)) ? "|" : "");
			}
			regex.append(')');
			last = t.end();
		}
		return regex.append(java.util.regex.Pattern.quote(expected.substring(last))).toString();
	}

	/**
	 * The Redis key of the (single) bucket of an API key client in an endpoint group.
	 * @param apiKey the API key as the client sends it
	 * @param plan the client's plan
	 * @param group the endpoint group
	 * @return the key, e.g. {@code rl:{search|k:HASH}:0}
	 */
	protected static String bucketKey(String apiKey, String plan, String group) {
		PlanLimits oneLimit = new PlanLimits(plan, group, List.of(new LimitDefinition("x", 1, 1, Duration.ofSeconds(1))));
		return new BucketKeys("rl").keysFor(new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(apiKey), plan),
				oneLimit).get(0);
	}

	/**
	 * Provisions an API key the way the provisioning side does: one SET on the master owning the plan key.
	 * @param cluster the Redis Cluster the gateway's plan store reads
	 * @param apiKey the API key
	 * @param plan its plan
	 */
	protected static void provision(RedisCluster cluster, String apiKey, String plan) {
		String planKey = RedisPlanStore.planKey(RedisPlanStore.DEFAULT_KEY_PREFIX, apiKey);
		cluster.masterOf(planKey).command("SET", planKey, plan);
	}

}
