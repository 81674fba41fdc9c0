package io.github.ratelimit.gateway.actuate;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.LeasingRateLimiter;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.github.ratelimit.gateway.redis.RedisClientChanges;
import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import io.github.ratelimit.gateway.webflux.GatewayTestApplication;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An operator's reset or top-up through one instance's {@code ratelimits} endpoint reaches the local state of every
 * instance within a second: three gateway instances over one real Redis (A, this test's gateway; B and C started beside
 * it), real HTTP in. B and C remember a client's denial (over-limit cache) or hold its lease; after the change through
 * A, a request on each of them is decided by Redis, which admits it, within the bound. An instance whose subscription
 * was cut while a change was made drops what it remembered once it is subscribed again.
 */
@ActiveProfiles({ "gateway-it", "observability-it", "client-changes-it" })
class ClientChangesInstancesIntegrationTest extends BaseRouteIntegrationTest {

	/** The bound the reference states: a change reaches every instance's local state within it. */
	private static final Duration BOUND = Duration.ofSeconds(1);

	private static final String[] PROFILES = { "gateway-it", "observability-it", "client-changes-it" };

	private static ConfigurableApplicationContext b;

	private static ConfigurableApplicationContext c;

	@Autowired
	private RedisClientChanges changes;

	@BeforeAll
	static void startTwoMoreInstances() {
		b = start();
		c = start();
	}

	@AfterAll
	static void stopThem() {
		for (ConfigurableApplicationContext instance : new ConfigurableApplicationContext[] { b, c }) {
			if (instance != null) {
				instance.close();
			}
		}
	}

	/** Every instance subscribed (a confirmation drops every remembered denial: none may come during a test). */
	@BeforeEach
	void subscribedAndNoDenialRemembered() {
		awaitSubscribedAfter(new long[] { 0, 0, 0 });
		cache(b).clear();
		cache(c).clear();
	}

	@Test
	void aLoginClientDeniedOnTwoInstancesIsAdmittedOnBothWithinASecondOfAResetThroughTheThird() {
		WebTestClient onB = clientOf(b);
		WebTestClient onC = clientOf(c);
		login(onB, HttpStatus.OK);
		login(onC, HttpStatus.OK);
		login(onB, HttpStatus.TOO_MANY_REQUESTS);
		login(onC, HttpStatus.TOO_MANY_REQUESTS);
		// both remember the denial: minutes of Retry-After, answered without Redis
		awaitRemembered(b);
		awaitRemembered(c);
		String retryAfter = login(onB, HttpStatus.TOO_MANY_REQUESTS).getResponseHeaders().getFirst("Retry-After");
		assertThat(Long.parseLong(retryAfter)).isGreaterThan(60);

		this.client.delete().uri("/actuator/ratelimits/login?ip=127.0.0.1").exchange().expectStatus().isOk();
		long reset = System.nanoTime();

		await().atMost(BOUND).pollInterval(Duration.ofMillis(20)).until(() -> status(onB) == 200);
		long admittedOnB = System.nanoTime();
		await().atMost(BOUND).pollInterval(Duration.ofMillis(20)).until(() -> status(onC) == 200);
		System.out.printf("Reset through A: B admitted %.1f ms after the endpoint's answer, C by %.1f ms%n",
				(admittedOnB - reset) / 1e6, (System.nanoTime() - reset) / 1e6);
		// the bucket in Redis is the reset one: 2 tokens, one taken on B and one on C
		login(onB, HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void aQuotaToppedUpThroughOneInstanceAdmitsOnTheOthersWithinASecond() {
		WebTestClient onB = clientOf(b);
		WebTestClient onC = clientOf(c);
		for (int i = 0; i < 3; i++) {
			quota(onB, HttpStatus.OK);
		}
		quota(onB, HttpStatus.TOO_MANY_REQUESTS);
		quota(onC, HttpStatus.TOO_MANY_REQUESTS);
		awaitRemembered(b);
		awaitRemembered(c);

		this.client.post().uri("/actuator/ratelimits/quota?apiKey=key-one&policy=free-quota-day&tokens=2")
			.contentType(MediaType.APPLICATION_JSON)
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.quota.remaining").isEqualTo(2);
		long toppedUp = System.nanoTime();

		await().atMost(BOUND).pollInterval(Duration.ofMillis(20))
			.until(() -> status(onB.get().uri("/quota/x").header("X-API-Key", "key-one")) == 200);
		await().atMost(BOUND).pollInterval(Duration.ofMillis(20))
			.until(() -> status(onC.get().uri("/quota/x").header("X-API-Key", "key-one")) == 200);
		System.out.printf("Top-up through A: B and C admitted within %.1f ms%n", (System.nanoTime() - toppedUp) / 1e6);
		// exactly the 2 tokens granted
		quota(onB, HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void aLeaseHeldByAnotherInstanceIsDroppedOnAResetAndItsNextRequestsSeeTheResetBucket() {
		WebTestClient onB = clientOf(b);
		double leasedBefore = checks(b, "lease");
		int sent = 0;
		// until B answers from a lease (10 s long; at least 4 tokens, one spent by that answer)
		while (checks(b, "lease") == leasedBefore && sent < 40) {
			onB.get().uri("/leased/" + sent++).header("X-API-Key", "key-one").exchange().expectStatus().isOk();
		}
		assertThat(checks(b, "lease")).as("answers from a lease").isGreaterThan(leasedBefore);
		// the lease still has tokens: B's next answer comes from it, with a remaining count 50 - (sent + 1)
		onB.get().uri("/leased/again").header("X-API-Key", "key-one").exchange().expectStatus().isOk()
			.expectHeader()
			.valueMatches("RateLimit", "\"free-leased\";r=" + (50 - (sent + 1)) + ";t=\\d+");
		assertThat(checks(b, "lease")).isGreaterThan(leasedBefore + 1);
		double fromRedis = checks(b, "redis");

		this.client.delete().uri("/actuator/ratelimits/leased?apiKey=key-one").exchange().expectStatus().isOk();

		// the lease is dropped (without a request spending it meanwhile)
		LeasingRateLimiter leases = b.getBean(DefaultLimiterChain.class).leases();
		assertThat(leases).isNotNull();
		await().atMost(BOUND).pollInterval(Duration.ofMillis(5)).until(() -> leases.size() == 0);
		// the next request is decided by Redis, from the full bucket: 49 of 50 left
		onB.get().uri("/leased/after").header("X-API-Key", "key-one").exchange().expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", "\"free-leased\";r=49;t=\\d+");
		assertThat(checks(b, "redis")).as("decided by Redis after the reset").isGreaterThan(fromRedis);
	}

	@Test
	void anInstanceWhoseSubscriptionWasCutDropsItsDenialsWhenSubscribedAgain() {
		WebTestClient onB = clientOf(b);
		login(onB, HttpStatus.OK);
		login(onB, HttpStatus.OK);
		login(onB, HttpStatus.TOO_MANY_REQUESTS);
		// a reset no instance is told of (as one published while B was cut off): B keeps its denial
		for (String key : redis.command("KEYS", "rl:{login|ip:127.0.0.1}*").split("\n")) {
			if (!key.isBlank()) {
				redis.command("DEL", key.strip());
			}
		}
		login(onB, HttpStatus.TOO_MANY_REQUESTS);
		awaitRemembered(b);

		// every subscription connection is cut; Lettuce reconnects and subscribes again
		long[] before = subscriptions();
		redis.command("CLIENT", "KILL", "TYPE", "pubsub");
		long cut = System.nanoTime();

		await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20)).until(() -> status(onB) == 200);
		System.out.printf("Subscription cut: B's denial dropped %.1f ms after%n", (System.nanoTime() - cut) / 1e6);
		awaitSubscribedAfter(before);
	}

	/** The instance remembers one denial (remembered as the store's answer completes, maybe after the response). */
	private static void awaitRemembered(ConfigurableApplicationContext instance) {
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(() -> cache(instance).size() == 1);
	}

	/** How many times each instance's subscription was confirmed: A, B, C. */
	private long[] subscriptions() {
		return new long[] { this.changes.subscriptions(), b.getBean(RedisClientChanges.class).subscriptions(),
				c.getBean(RedisClientChanges.class).subscriptions() };
	}

	private void awaitSubscribedAfter(long[] before) {
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> {
			long[] now = subscriptions();
			return now[0] > before[0] && now[1] > before[1] && now[2] > before[2];
		});
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(GatewayTestApplication.class).profiles(PROFILES)
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(ReactorResourceFactory.class, ClientChangesInstancesIntegrationTest::ownEventLoops))
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port());
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	private static OverLimitCache cache(ConfigurableApplicationContext instance) {
		OverLimitCache cache = instance.getBean(DefaultLimiterChain.class).overLimitCache();
		assertThat(cache).isNotNull();
		return cache;
	}

	private static double checks(ConfigurableApplicationContext instance, String source) {
		List<Timer> timers = List.copyOf(instance.getBean(MeterRegistry.class)
			.find(MicrometerRateLimitMetrics.CHECKS)
			.tag("source", source)
			.timers());
		return timers.stream().mapToDouble(Timer::count).sum();
	}

	/** A client of an instance from 127.0.0.1, a connection of its own per request. */
	private static WebTestClient clientOf(ConfigurableApplicationContext instance) {
		HttpClient http = HttpClient.create(ConnectionProvider.newConnection())
			.bindAddress(() -> new InetSocketAddress("127.0.0.1", 0));
		return WebTestClient.bindToServer(new ReactorClientHttpConnector(http))
			.baseUrl("http://127.0.0.1:" + instance.getEnvironment().getProperty("local.server.port"))
			.responseTimeout(Duration.ofSeconds(10))
			.build();
	}

	private static org.springframework.test.web.reactive.server.EntityExchangeResult<Void> login(WebTestClient on,
			HttpStatus expected) {
		return on.post().uri("/auth/login").exchange().expectStatus().isEqualTo(expected).expectBody(Void.class)
			.returnResult();
	}

	private static void quota(WebTestClient on, HttpStatus expected) {
		on.get().uri("/quota/x").header("X-API-Key", "key-one").exchange().expectStatus().isEqualTo(expected);
	}

	private static int status(WebTestClient on) {
		return status(on.post().uri("/auth/login"));
	}

	private static int status(WebTestClient.RequestHeadersSpec<?> request) {
		return request.exchange().returnResult(Void.class).getStatus().value();
	}

}
