package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

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

			EntityExchangeResult<String> direct = Gateways.get(WebTestClient.bindToServer().baseUrl(upstreamUri).build(),
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
	void upstreamUriRoutesToTheRealUpstreamAndStartsNoDemo(TestRedis redis) {
		DisposableServer real = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> response.header("Content-Type", "application/json")
				.sendString(Mono.just("{\"upstream\":\"real\",\"uri\":\"" + request.uri() + "\"}"), StandardCharsets.UTF_8))
			.bindNow();
		String realUri = "http://127.0.0.1:" + real.port();
		// UPSTREAM_URI as the environment variable would set it (application.yml maps it to sample.upstream-uri).
		try (ConfigurableApplicationContext context = Gateways.start(redis, "--UPSTREAM_URI=" + realUri)) {
			assertThat(context.getEnvironment().getProperty(DemoUpstreamInitializer.PROPERTY)).isEqualTo(realUri);
			assertThat(context.containsBean(DemoUpstreamInitializer.BEAN_NAME)).isFalse();
			assertThat(context.getEnvironment().getPropertySources().contains(DemoUpstreamInitializer.PROPERTY_SOURCE))
				.isFalse();

			EntityExchangeResult<String> result = Gateways.get(Gateways.client(context), "/public/hello?x=1", null);

			assertThat(result.getStatus()).isEqualTo(HttpStatus.OK);
			assertThat(result.getResponseBody()).isEqualTo("{\"upstream\":\"real\",\"uri\":\"/public/hello?x=1\"}");
			assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"anonymous-public\";q=60;w=60");
		}
		finally {
			real.disposeNow();
		}
	}

	private static void connect(int port) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
		}
	}

}
