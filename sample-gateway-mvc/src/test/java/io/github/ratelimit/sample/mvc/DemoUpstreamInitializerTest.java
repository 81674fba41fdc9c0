package io.github.ratelimit.sample.mvc;

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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The demo upstream starts only when no upstream is configured, and stops with its context. */
@ExtendWith(RedisExtension.class)
class DemoUpstreamInitializerTest {

	@Test
	void demoUpstreamServesUntilTheContextCloses(TestRedis redis) {
		String upstreamUri;
		try (ConfigurableApplicationContext context = Gateways.start(redis)) {
			upstreamUri = context.getEnvironment().getRequiredProperty(DemoUpstreamInitializer.PROPERTY);
			assertThat(upstreamUri).matches("http://127\\.0\\.0\\.1:\\d+");
			assertThat(context.getBean(DemoUpstreamInitializer.BEAN_NAME, DemoUpstream.class).uri())
				.isEqualTo(upstreamUri);

			EntityExchangeResult<String> direct = Gateways.get(Gateways.client(URI.create(upstreamUri).getPort()),
					"/any/path?x=1", null);
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
		try (ConfigurableApplicationContext context = Gateways.start(redis, "--UPSTREAM_URI=" + realUri)) {
			assertThat(context.getEnvironment().getProperty(DemoUpstreamInitializer.PROPERTY)).isEqualTo(realUri);
			assertThat(context.containsBean(DemoUpstreamInitializer.BEAN_NAME)).isFalse();
			assertThat(context.getEnvironment().getPropertySources().contains(DemoUpstreamInitializer.PROPERTY_SOURCE))
				.isFalse();

			// a YAML route and the Java DSL route both go to the real upstream
			for (String path : new String[] { "/public/hello?x=1", "/auth/login" }) {
				EntityExchangeResult<String> result = Gateways.get(Gateways.client(context), path, null);

				assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
				assertThat(result.getResponseBody()).isEqualTo("{\"upstream\":\"real\",\"uri\":\"" + path + "\"}");
			}
			EntityExchangeResult<String> result = Gateways.get(Gateways.client(context), "/public/again", null);
			assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"anonymous-public\";q=60;w=60");
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
