package io.github.ratelimit.sample.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With no Redis at all a sample gateway starts, says so, serves non-critical routes (let through or limited locally,
 * never refused for the missing Redis) and refuses critical ones ({@code login}, {@code otp}) with 503 (fail closed).
 * A sample's subclass is a {@code @SpringBootTest} with a random port.
 */
@ExtendWith(OutputCaptureExtension.class)
public abstract class AbstractWithoutRedisTest {

	private static final int CLOSED_PORT = closedPort();

	@DynamicPropertySource
	static void redisNowhere(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> CLOSED_PORT);
	}

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private AbstractRedisStartupCheck<?> redisStartupCheck;

	@Test
	void publicRouteAnswersQuickly() {
		RestTestClient client = SampleGateways.client(this.port);

		long start = System.nanoTime();
		EntityExchangeResult<String> result = SampleGateways.get(client, "/public/hello", null);
		Duration took = Duration.ofNanos(System.nanoTime() - start);

		assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(result.getResponseBody())
			.isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/public/hello\"}");
		assertThat(took).isLessThan(Duration.ofSeconds(2));
	}

	@Test
	void nonCriticalRouteIsNeverRefusedBecauseRedisIsDown() {
		RestTestClient client = SampleGateways.client(this.port);
		EntityExchangeResult<String> first = SampleGateways.get(client, "/api/search/x", "demo-free-key");
		assertThat(first.getStatus()).isEqualTo(HttpStatus.OK);
		for (int i = 0; i < 7; i++) { // more than the free plan's 5 searches
			EntityExchangeResult<String> result = SampleGateways.get(client, "/api/search/x", "demo-free-key");
			// Let through, or held to a limit locally; never a 5xx for the missing Redis.
			assertThat(result.getStatus()).isIn(HttpStatus.OK, HttpStatus.TOO_MANY_REQUESTS);
		}
	}

	@Test
	void criticalRoutesFailClosedWith503() {
		for (String path : new String[] { "/auth/login", "/auth/otp" }) {
			EntityExchangeResult<String> result = SampleGateways.get(SampleGateways.client(this.port), path, null);

			assertThat(result.getStatus()).as(path).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
			assertThat(Long.parseLong(result.getResponseHeaders().getFirst("Retry-After"))).isGreaterThanOrEqualTo(1);
			assertThat(result.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		}
	}

	@Test
	void healthStaysUpAndReportsTheLimiter() {
		SampleGateways.client(this.managementPort).get().uri("/actuator/health").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.details.circuitBreaker").exists()
			.jsonPath("$.components.redis").doesNotExist();
	}

	@Test
	void startupWarnsThatRedisIsNotReachable(CapturedOutput output) {
		assertThat(this.redisStartupCheck.check().orTimeout(10, TimeUnit.SECONDS).join()).isFalse();
		String warning = "Redis at 127.0.0.1:" + CLOSED_PORT + " is not reachable: "
				+ this.redisStartupCheck.consequence();
		assertThat(warning).contains("critical groups login, otp answer 503");
		// refused: nothing listens there (closedPort()), so no other server's answer is mistaken for Redis's
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(output.getOut())
				.containsPattern(Pattern.quote(warning + " (") + refusalReasonPattern()));
	}

	/**
	 * How the sample's Redis client words a refused connection, at the start of the reason in the warning.
	 * @return a regular expression; by default any text of the line ending in {@code Connection refused}
	 */
	protected String refusalReasonPattern() {
		return "[^\\n]*Connection refused";
	}

	/**
	 * A port nothing listens on, below Linux's ephemeral range (32768-60999): a port freed from that range could be
	 * taken by the next server of this JVM started on port 0 (the Server MVC sample's own Tomcat took it once, and
	 * Lettuce then read {@code HTTP/1.1 400} as Redis's answer).
	 */
	private static int closedPort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20000, 30000);
			try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
				return socket.getLocalPort();
			}
			catch (IOException ex) {
				// taken: try another
			}
		}
		throw new IllegalStateException("no free port between 20000 and 30000 on the loopback address");
	}

}
