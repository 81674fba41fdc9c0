package io.github.ratelimit.sample.support;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import com.sun.net.httpserver.HttpServer;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** A sample's demo upstream starts only when no upstream is configured, and stops with its context. */
@ExtendWith(RedisExtension.class)
public abstract class AbstractDemoUpstreamInitializerTest {

	/**
	 * The sample's application class.
	 * @return e.g. {@code SampleGatewayApplication.class}
	 */
	protected abstract Class<?> application();

	@Test
	void demoUpstreamServesUntilTheContextCloses(TestRedis redis) {
		String upstreamUri;
		try (ConfigurableApplicationContext context = SampleGateways.start(application(), redis)) {
			upstreamUri = context.getEnvironment().getRequiredProperty(AbstractDemoUpstreamInitializer.PROPERTY);
			assertThat(upstreamUri).matches("http://127\\.0\\.0\\.1:\\d+");
			assertThat(context.getBean(AbstractDemoUpstreamInitializer.BEAN_NAME, AbstractDemoUpstream.class).uri())
				.isEqualTo(upstreamUri);

			RestTestClient upstream = SampleGateways.client(URI.create(upstreamUri).getPort());
			EntityExchangeResult<String> direct = SampleGateways.get(upstream, "/any/path?x=1", null);
			assertThat(direct.getStatus()).isEqualTo(HttpStatus.OK);
			assertThat(direct.getResponseBody())
				.isEqualTo("{\"upstream\":\"demo\",\"method\":\"GET\",\"path\":\"/any/path\"}");
		}
		int upstreamPort = URI.create(upstreamUri).getPort();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThatThrownBy(() -> connect(upstreamPort)).isInstanceOf(ConnectException.class));
	}

	@Test
	void upstreamUriRoutesToTheRealUpstreamAndStartsNoDemo(TestRedis redis) throws IOException {
		HttpServer real = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		real.createContext("/", (exchange) -> {
			byte[] body = ("{\"upstream\":\"real\",\"uri\":\"" + exchange.getRequestURI() + "\"}")
				.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(200, body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		});
		real.start();
		String realUri = "http://127.0.0.1:" + real.getAddress().getPort();
		// UPSTREAM_URI as the environment variable would set it (application.yml maps it to sample.upstream-uri).
		try (ConfigurableApplicationContext context = SampleGateways.start(application(), redis,
				"--UPSTREAM_URI=" + realUri)) {
			assertThat(context.getEnvironment().getProperty(AbstractDemoUpstreamInitializer.PROPERTY))
				.isEqualTo(realUri);
			assertThat(context.containsBean(AbstractDemoUpstreamInitializer.BEAN_NAME)).isFalse();
			assertThat(context.getEnvironment()
				.getPropertySources()
				.contains(AbstractDemoUpstreamInitializer.PROPERTY_SOURCE)).isFalse();

			// the public route and the login route (in the Server MVC sample built with the Java DSL) alike
			for (String path : new String[] { "/public/hello?x=1", "/auth/login" }) {
				EntityExchangeResult<String> result = SampleGateways.get(SampleGateways.client(context), path, null);

				assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
				assertThat(result.getResponseBody()).isEqualTo("{\"upstream\":\"real\",\"uri\":\"" + path + "\"}");
			}
			EntityExchangeResult<String> again = SampleGateways.get(SampleGateways.client(context), "/public/again",
					null);
			assertThat(again.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"anonymous-public\";q=60;w=60");
		}
		finally {
			real.stop(0);
		}
	}

	private static void connect(int port) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
		}
	}

}
