package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import io.github.ratelimit.test.KeepAliveConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Reactor Netty server alone, no gateway: a handler that answers some requests at once (as the limiter answers
 * from its over-limit cache or a lease) and some after an asynchronous step (as it answers after Redis), and keep-alive
 * clients that send their next request before the server has finished with the previous one. Reactor Netty up to
 * 1.3.7 stops reading such a connection when a request it had queued behind an asynchronous one is answered
 * synchronously (reactor-netty issue #4361, fixed by PR #4347 in 1.3.8): the next request is never read and never
 * answered. See src/docs/reports/keep-alive-report.md.
 */
class ReactorNettyKeepAliveTest {

	private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

	private static DisposableServer server;

	@BeforeAll
	static void startServer() {
		server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> response.sendString(request.uri().startsWith("/async")
					? Mono.delay(Duration.ofMillis(1)).thenReturn("async") : Mono.just("sync")))
			.bindNow(Duration.ofSeconds(10));
	}

	@AfterAll
	static void stopServer() {
		server.disposeNow(Duration.ofSeconds(10));
	}

	@Test
	void everyPipelinedRequestIsAnsweredWhenAsynchronousAndSynchronousAnswersMix() {
		try (KeepAliveConnection connection = new KeepAliveConnection(server.port(), READ_TIMEOUT)) {
			for (int round = 0; round < 200; round++) {
				// an asynchronous answer, then one given at once while the first is still pending: both queued
				connection.send(connection.get("/async/" + round), connection.get("/sync/" + round));
				assertThat(connection.readStatus()).as("answer to /async/%d", round).isEqualTo(200);
				assertThat(connection.readStatus()).as("answer to /sync/%d", round).isEqualTo(200);
			}
		}
	}

}
