package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.autoconfigure.RateLimitDisabledAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;
import static org.awaitility.Awaitility.await;

/**
 * {@code ratelimit.enabled=false} through a real gateway whose routes name the {@code RateLimit} filter (the
 * {@code gateway-it} routes: shortcut, arguments, a critical group, a cost): it starts, every request passes beyond
 * every limit with no rate limit field, one WARN at start-up names the routes, and nothing of the limiter exists or
 * connects to Redis. Redis is configured as a stand-in that accepts TCP connections and never answers
 * ({@link #redisStandIn}): any connection attempt, by the limiter or anything else, is seen there.
 */
@SpringBootTest(classes = RateLimitDisabledRoutesIntegrationTest.Gateway.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "ratelimit.enabled=false")
@ActiveProfiles("gateway-it")
@ExtendWith(OutputCaptureExtension.class)
class RateLimitDisabledRoutesIntegrationTest {

	/** Where the gateway is told Redis is: a socket that takes connections into its backlog and never answers. */
	static final ServerSocketChannel redisStandIn = listen();

	private static final AtomicInteger connections = new AtomicInteger();

	private static final String WARNING = "Rate limiting is disabled (ratelimit.enabled=false): routes [a, b, ip,"
			+ " fast, slow, multi, leased, heavy, login, load, shared] name the RateLimit filter and pass unchecked"
			+ " (no limits, no 429 or 503, no path check)";

	@LocalServerPort
	int port;

	@Autowired
	ConfigurableApplicationContext context;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> redisStandIn.socket().getLocalPort());
	}

	@Test
	void routesThatNameTheFilterPassUncheckedBeyondEveryLimit(CapturedOutput output) {
		for (int i = 0; i < 5; i++) { // capacity 2 for key-one when enabled
			RawHttp.Response response = send("GET", "/a/" + i, "X-API-Key: key-one");
			assertThat(response.status()).as(response.toString()).isEqualTo(200);
			assertThat(response.header("RateLimit")).isNull();
			assertThat(response.header("RateLimit-Policy")).isNull();
		}
		for (int i = 0; i < 3; i++) { // cost 4 of a capacity of 10
			assertThat(send("GET", "/heavy/" + i, "X-API-Key: key-one").status()).isEqualTo(200);
		}
		// a critical route would fail closed with 503 without Redis, an ambiguous key would be 400: both pass
		assertThat(send("POST", "/auth/login").status()).isEqualTo(200);
		assertThat(send("GET", "/a/x", "X-API-Key: key-one", "X-API-Key: key-two").status()).isEqualTo(200);
		// and no path check: a path that is not canonical is routed as sent
		assertThat(send("GET", "/a//x", "X-API-Key: key-one").status()).isEqualTo(200);
		// the one WARN, once, and no other warning or error while this gateway started (on the test's thread; other
		// test contexts of this JVM may log on threads of their own meanwhile); no connection: see the other test
		assertThat(output.getAll()).containsOnlyOnce(WARNING);
		// (Lettuce's lines: another test class's context, closed on this thread when the context cache evicts it)
		assertThat(output.getAll().lines()
			.filter((line) -> line.matches(".* (WARN|ERROR) .*\\[ *main\\] .*"))
			.filter((line) -> !line.contains(" io.lettuce.core.")))
			.singleElement(STRING)
			.endsWith(WARNING);
	}

	@Test
	void nothingOfTheLimiterExistsAndNothingConnectsToRedis() {
		assertThat(send("GET", "/b/1").status()).isEqualTo(200);
		List<Class<?>> starterBeans = Arrays.stream(this.context.getBeanDefinitionNames())
			.map(this.context::getType)
			.filter((type) -> type != null && type.getName().startsWith("io.github.ratelimit.gateway.")
					&& type.getEnclosingClass() != RateLimitDisabledRoutesIntegrationTest.class)
			.toList();
		assertThat(starterBeans).containsExactlyInAnyOrder(RateLimitDisabledAutoConfiguration.class,
				DisabledRateLimitGatewayFilterFactory.class);
		assertThat(this.context.containsBean("rateLimiterHealthIndicator")).isFalse();
		assertThat(this.context.containsBean("rateLimitsEndpoint")).isFalse();
		// a connection would wait in the backlog (the limiter's Lettuce connection opens at start-up)
		await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> connectionsSoFar() == 0);
	}

	private RawHttp.Response send(String method, String target, String... headerLines) {
		return RawHttp.send(this.port, "127.0.0.1", method, target, headerLines);
	}

	/** Connections made to the stand-in since the start, taken from its backlog and counted. */
	private static int connectionsSoFar() throws IOException {
		for (SocketChannel connection = redisStandIn.accept(); connection != null; connection = redisStandIn.accept()) {
			connections.incrementAndGet();
			connection.close();
		}
		return connections.get();
	}

	private static ServerSocketChannel listen() {
		try {
			ServerSocketChannel channel = ServerSocketChannel.open();
			channel.bind(new InetSocketAddress("127.0.0.1", 0));
			channel.configureBlocking(false);
			return channel;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** A gateway of the auto-configurations alone, with the {@code gateway-it} routes. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Gateway {

	}

}
