package io.github.ratelimit.gateway.filter;

import java.net.InetSocketAddress;
import java.time.Duration;

import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

/** Helpers for route tests: HTTP clients bound to a chosen loopback source address (a distinct "client IP"). */
final class GatewayTestSupport {

	private GatewayTestSupport() {
	}

	/**
	 * A client whose connections come from {@code sourceIp} (any 127.x.y.z works on Linux loopback), so the gateway
	 * sees a distinct direct client per address.
	 */
	static WebTestClient clientFrom(String sourceIp, int port) {
		// a connection of its own per request: no pooled connection is shared with other tests' contexts
		HttpClient http = HttpClient.create(ConnectionProvider.newConnection())
			.bindAddress(() -> new InetSocketAddress(sourceIp, 0));
		return WebTestClient.bindToServer(new ReactorClientHttpConnector(http))
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(10))
			.build();
	}

	/**
	 * A {@link WebClient} for load-style tests, with a connection of its own per request (like {@link #clientFrom}):
	 * no pooled connection is shared with other tests' contexts.
	 */
	static WebClient webClient(int port) {
		return WebClient.builder()
			.clientConnector(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())))
			.baseUrl("http://127.0.0.1:" + port)
			.build();
	}

	/**
	 * Let real time pass, as a scenario step ("the client waits Retry-After seconds"); not used for
	 * synchronisation, which is done with Awaitility.
	 */
	static void letTimePass(Duration duration) {
		Mono.delay(duration).block();
	}

}
