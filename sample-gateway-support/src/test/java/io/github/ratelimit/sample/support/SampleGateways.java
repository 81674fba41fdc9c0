package io.github.ratelimit.sample.support;

import java.net.http.HttpClient;
import java.time.Duration;

import io.github.ratelimit.test.redis.TestRedis;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

/** Helpers of the samples' tests: real HTTP clients and separately started gateway instances. */
public final class SampleGateways {

	/** The header the samples read API keys from. */
	public static final String API_KEY_HEADER = "X-API-Key";

	private SampleGateways() {
	}

	/**
	 * A client talking real HTTP/1.1 (the JDK's HTTP client) to a gateway listening on a local port; every answer
	 * within 10 s.
	 * @param port the port
	 * @return the client
	 */
	public static RestTestClient client(int port) {
		HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		JdkClientHttpRequestFactory requestFactory = new JdkClientHttpRequestFactory(http);
		requestFactory.setReadTimeout(Duration.ofSeconds(10));
		return RestTestClient.bindToServer(requestFactory).baseUrl("http://127.0.0.1:" + port).build();
	}

	/**
	 * A client for a context started by {@link #start(Class, TestRedis, String...)}.
	 * @param context the running context
	 * @return the client
	 */
	public static RestTestClient client(ConfigurableApplicationContext context) {
		return client(port(context));
	}

	/**
	 * The port a started context serves requests on.
	 * @param context the running context
	 * @return the port
	 */
	public static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port"));
	}

	/**
	 * Start one more instance of a sample gateway on random ports (requests and management), using the given Redis.
	 * Settings are passed as command-line arguments so they win over {@code application.yml}.
	 * @param application the sample's application class
	 * @param redis the Redis shared by the instances
	 * @param extraArguments further {@code --name=value} arguments
	 * @return the running context; close it when done
	 */
	public static ConfigurableApplicationContext start(Class<?> application, TestRedis redis,
			String... extraArguments) {
		String[] base = { "--server.port=0", "--management.server.port=0", "--spring.main.banner-mode=off",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port() };
		String[] arguments = new String[base.length + extraArguments.length];
		System.arraycopy(base, 0, arguments, 0, base.length);
		System.arraycopy(extraArguments, 0, arguments, base.length, extraArguments.length);
		return new SpringApplicationBuilder(application).run(arguments);
	}

	/**
	 * GET a path, optionally with an API key, and return the whole exchange.
	 * @param client the client
	 * @param path the path
	 * @param apiKey the API key, or {@code null} for none
	 * @return the exchange with the body as text
	 */
	public static EntityExchangeResult<String> get(RestTestClient client, String path, @Nullable String apiKey) {
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

	/**
	 * POST a JSON body to a path, optionally with an API key, and return the whole exchange.
	 * @param client the client
	 * @param path the path
	 * @param apiKey the API key, or {@code null} for none
	 * @param json the request body, sent as {@code application/json}
	 * @return the exchange with the body as text
	 */
	public static EntityExchangeResult<String> post(RestTestClient client, String path, @Nullable String apiKey,
			String json) {
		return client.post()
			.uri(path)
			.headers((headers) -> {
				if (apiKey != null) {
					headers.set(API_KEY_HEADER, apiKey);
				}
			})
			.contentType(MediaType.APPLICATION_JSON)
			.body(json)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

}
