package io.github.ratelimit.mvc;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.test.redis.TestRedis;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The base of the route tests of the Server MVC front end: a real Gateway Server MVC on Tomcat on a random port
 * ({@link ServerMvcTestApplication}, profile {@code mvc-it}), buckets in the real {@link TestRedis#shared() test
 * Redis}, routes to the real {@link Upstream}, and real HTTP in (the JDK's client, HTTP/1.1). Every test starts with
 * empty buckets and nothing received upstream.
 */
@SpringBootTest(classes = ServerMvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("mvc-it")
abstract class ServerMvcRouteIntegrationTest {

	static final TestRedis redis = TestRedis.shared();

	static final Upstream upstream = Upstream.shared();

	private static final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	@LocalServerPort
	int port;

	OverLimitCache overLimitCache;

	@Autowired
	void limiterChain(DefaultLimiterChain chain) {
		this.overLimitCache = chain.overLimitCache();
	}

	@DynamicPropertySource
	static void redisAndUpstream(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("upstream.uri", upstream::uri);
	}

	@BeforeEach
	void emptyBuckets() {
		redis.flushAll();
		this.overLimitCache.clear();
		upstream.clear();
	}

	/**
	 * Send a request to the gateway.
	 * @param method the method
	 * @param path the request target, sent as written
	 * @param headers names and values, alternating
	 * @return the response
	 */
	HttpResponse<String> send(String method, String path, String... headers) {
		return send(this.port, method, path, headers);
	}

	HttpResponse<String> get(String path, String... headers) {
		return send("GET", path, headers);
	}

	/** Wait for time to pass on the buckets' clock (what a test of refills is about, not a synchronisation). */
	static void letTimePass(Duration duration) {
		Awaitility.await().pollDelay(duration).atMost(duration.plusSeconds(5)).until(() -> true);
	}

	/**
	 * A regular expression for a {@code RateLimit} field received after some requests of a test: the policies and
	 * their remaining counts exactly, each policy's {@code t} the expected value or up to 5 less, the whole seconds
	 * a loaded machine may let pass between a test's requests (as the WebFlux route tests allow).
	 * @param expected the field if no time had passed, e.g. {@code "free-a";r=1;t=60}
	 * @return the expression
	 */
	static String aboutRateLimit(String expected) {
		Matcher t = Pattern.compile(";t=(\\d+)").matcher(expected);
		StringBuilder regex = new StringBuilder();
		int last = 0;
		while (t.find()) {
			regex.append(Pattern.quote(expected.substring(last, t.start()))).append(";t=(");
			long seconds = Long.parseLong(t.group(1));
			for (long s = seconds; s >= Math.max(0, seconds - 5); s--) {
				regex.append(s).append((s > Math.max(0, seconds - 5)) ? "|" : "");
			}
			regex.append(')');
			last = t.end();
		}
		return regex.append(Pattern.quote(expected.substring(last))).toString();
	}

	static HttpResponse<String> send(int port, String method, String path, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.method(method, HttpRequest.BodyPublishers.noBody());
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException("request " + method + " " + path + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
