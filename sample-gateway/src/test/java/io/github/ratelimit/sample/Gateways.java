package io.github.ratelimit.sample;

import java.time.Duration;

import io.github.ratelimit.test.redis.TestRedis;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Helpers shared by the tests: real HTTP clients and separately started gateway instances. */
final class Gateways {

	static final String API_KEY_HEADER = "X-API-Key";

	private Gateways() {
	}

	/**
	 * A client talking real HTTP to a gateway listening on a local port.
	 * @param port the port
	 * @return the client
	 */
	static WebTestClient client(int port) {
		return WebTestClient.bindToServer()
			.baseUrl("http://localhost:" + port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
	}

	/**
	 * A client talking real HTTP to a gateway's management port, which listens on 127.0.0.1 only (application.yml).
	 * Every request opens a connection of its own, so no request here depends on how the previous one left a pooled
	 * connection: the tests send writes the read-only actuator refuses, and twice in seven runs on a loaded machine a
	 * request after such refusals got no response within 10 s (a pooled connection being closed by the server is the
	 * suspected cause; not reproduced in isolation).
	 * @param port the management port
	 * @return the client
	 */
	static WebTestClient managementClient(int port) {
		HttpClient http = HttpClient.create(ConnectionProvider.newConnection());
		return WebTestClient.bindToServer(new ReactorClientHttpConnector(http))
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
	}

	/**
	 * A client for a context started by {@link #start(TestRedis, String...)}.
	 * @param context the running context
	 * @return the client
	 */
	static WebTestClient client(ConfigurableApplicationContext context) {
		return client(port(context));
	}

	static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port"));
	}

	static int managementPort(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.management.port"));
	}

	/**
	 * Start one more instance of the sample gateway on random ports (requests and management), using the given Redis.
	 * Settings are passed as command-line arguments so they win over {@code application.yml}.
	 * @param redis the Redis shared by the instances
	 * @param extraArguments further {@code --name=value} arguments
	 * @return the running context; close it when done
	 */
	static ConfigurableApplicationContext start(TestRedis redis, String... extraArguments) {
		String[] base = { "--server.port=0", "--management.server.port=0", "--spring.main.banner-mode=off",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port() };
		String[] arguments = new String[base.length + extraArguments.length];
		System.arraycopy(base, 0, arguments, 0, base.length);
		System.arraycopy(extraArguments, 0, arguments, base.length, extraArguments.length);
		return new SpringApplicationBuilder(SampleGatewayApplication.class).run(arguments);
	}

	/**
	 * GET a path, optionally with an API key, and return the whole exchange.
	 * @param client the client
	 * @param path the path
	 * @param apiKey the API key, or {@code null} for none
	 * @return the exchange with the body as text
	 */
	static EntityExchangeResult<String> get(WebTestClient client, String path, String apiKey) {
		return client.get()
			.uri(path)
			.headers((headers) -> {
				if (apiKey != null) {
					headers.set(API_KEY_HEADER, apiKey);
				}
			})
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

}
