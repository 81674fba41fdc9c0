package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.test.redis.SecureRedisServer;
import org.junit.jupiter.api.BeforeEach;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The base of the route tests against Redis as managed services run it: TLS only (no plain port), the
 * {@code default} user disabled, ACL users. The gateway reaches it through Spring Boot's own properties only:
 * {@code spring.data.redis.host/port}, {@code spring.data.redis.username/password},
 * {@code spring.data.redis.ssl.enabled} and {@code spring.data.redis.ssl.bundle} naming a PEM bundle that trusts the
 * test's CA. Each subclass says which user and password the gateway uses ({@link #username()}, ...): one server for
 * the test JVM ({@link #redis}), with every user these tests need.
 *
 * <p>The gateway is {@link ClusterGatewayTestApplication} (nothing but the starter's auto-configuration, so with
 * {@code ratelimit.plan-store.type=redis} plans come from the Redis plan store, the static keys of profile
 * {@code gateway-it} first). Not a {@link BaseRouteIntegrationTest}: that one points {@code spring.data.redis.host/port} at the shared
 * plain test Redis, and a superclass's dynamic properties win over a subclass's.
 */
@SpringBootTest(classes = ClusterGatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class ManagedRedisRouteIntegrationTest {

	/** The ACL user with exactly the rule of the operations guide. */
	static final String USER = "ratelimiter";

	static final String PASSWORD = "limiter-secret";

	/**
	 * The minimal rule, as written in {@code src/docs/reference/operations.md} ("Managed Redis: AUTH, ACL, TLS"), for the
	 * default {@code ratelimit.key-prefix} {@code rl}.
	 */
	static final String MINIMAL_RULE = "resetkeys ~rl:* resetchannels &rl:changes -@all +evalsha +eval +time +get +set "
			+ "+del +pexpire +hget +hmget +hset +zadd +zcard +zcount +zrange +zrem +zremrangebyscore +zremrangebyrank "
			+ "+zrangebyscore +zscore +publish +subscribe";

	/** A user with every command of the minimal rule but keys of another application ({@code cache:*}) only. */
	static final String OTHER_KEYS_USER = "cache-user";

	/** The managed Redis, started once for the test JVM; stopped by its shutdown hook. */
	static final SecureRedisServer redis = SecureRedisServer.builder()
		.user(USER, PASSWORD, MINIMAL_RULE)
		.user(OTHER_KEYS_USER, PASSWORD, MINIMAL_RULE.replace("~rl:*", "~cache:*"))
		.start();

	@DynamicPropertySource
	static void managedRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("spring.data.redis.ssl.enabled", () -> "true");
		registry.add("spring.data.redis.ssl.bundle", () -> "managed-redis");
		registry.add("spring.ssl.bundle.pem.managed-redis.truststore.certificate",
				() -> "file:" + redis.certificates().caCertificate());
	}

	/** The gateway's HTTP port. */
	@LocalServerPort
	protected int port;

	/** The limiter chain's over-limit cache: cleared between tests. */
	protected OverLimitCache overLimitCache;

	@Autowired
	void limiterChain(DefaultLimiterChain chain) {
		this.overLimitCache = chain.overLimitCache();
	}

	/** A client from 127.0.0.1, a connection of its own per request. */
	protected WebTestClient client;

	@BeforeEach
	final void startFromEmptyBuckets() {
		this.client = WebTestClient
			.bindToServer(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())))
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
		emptyBuckets();
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

	/** Flushes the managed Redis (as its administrator) and forgets the denials this instance remembers. */
	protected void emptyBuckets() {
		redis.flushAll();
		redis.command("ACL", "LOG", "RESET");
		this.overLimitCache.clear();
	}

}
