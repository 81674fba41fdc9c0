package io.github.ratelimit.mvc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Through the Server MVC gateway: a concurrency limit holds a slot until the proxied response has been written (Server
 * MVC copies the upstream's body after the route's filters returned), and decisions show in the same meters and
 * actuator endpoint as on WebFlux.
 */
class ServerMvcConcurrencyAndObservabilityIntegrationTest extends ServerMvcRouteIntegrationTest {

	@Test
	void aSlotIsHeldUntilTheResponseIsWrittenThenGivenBack() throws Exception {
		HttpRequest held = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/hold/1"))
			.header("X-API-Key", "key-one")
			.build();
		CompletableFuture<HttpResponse<String>> first = HttpClient.newHttpClient()
			.sendAsync(held, HttpResponse.BodyHandlers.ofString());
		await().atMost(Duration.ofSeconds(20)).until(() -> upstream.holding() == 1);
		HttpResponse<String> second = get("/hold/2", "X-API-Key", "key-one");
		assertThat(second.statusCode()).isEqualTo(429);
		assertThat(second.headers().firstValue("RateLimit-Policy")).contains("\"free-held\";q=1;qu=\"concurrency\"");
		assertThat(second.body()).contains("\"violated-policies\":[\"free-held\"]");
		// another client has slots of its own
		upstream.answerHeld();
		assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		upstream.answerHeld(); // the next held request goes through at once
		await().atMost(Duration.ofSeconds(20))
			.until(() -> get("/hold/3", "X-API-Key", "key-one").statusCode() == 200);
	}

	@Test
	void decisionsShowInTheMetersAndTheEndpoint() {
		assertThat(get("/a/1", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		assertThat(get("/a/2", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		assertThat(get("/a/3", "X-API-Key", "key-one").statusCode()).isEqualTo(429);
		String prometheus = get("/actuator/prometheus").body();
		assertThat(prometheus).containsPattern(
				"ratelimit_decisions_total\\{[^}]*group=\"a\"[^}]*outcome=\"denied\"[^}]*plan=\"free\"[^}]*route=\"a\"[^}]*\\} [1-9]");
		String endpoint = get("/actuator/ratelimits").body();
		assertThat(endpoint).contains("\"a\":{\"routeId\":\"a\",\"group\":\"a\",\"keyBy\":\"API_KEY\",\"cost\":1,"
				+ "\"critical\":false,\"shadow\":false}");
		// configured routes are known from start-up, before any request of theirs (none goes to /auth/login here)
		assertThat(endpoint).contains("\"login\":{\"routeId\":\"login\",\"group\":\"login\",\"keyBy\":\"IP\","
				+ "\"cost\":1,\"critical\":true,\"shadow\":false}");
		HttpResponse<String> client = get("/actuator/ratelimits/a?apiKey=key-one");
		assertThat(client.statusCode()).isEqualTo(200);
		assertThat(client.body()).contains("\"plan\":\"free\"").contains("\"buckets\":[{\"policy\":\"free-a\"")
			.doesNotContain("key-one");
		HttpResponse<String> unknown = get("/actuator/ratelimits/a?apiKey=never-issued");
		assertThat(unknown.statusCode()).isEqualTo(404);
		assertThat(unknown.body()).startsWith("{\"error\":\"unknown API key");
		assertThat(get("/actuator/health").body())
			.containsPattern("\"rateLimiter\":\\{\"details\":\\{\"decisions\":\"redis\",[^}]*\\}[^}]*\\},\"status\":\"UP\"\\}");
	}

}
