package io.github.ratelimit.mvc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Through the Server MVC gateway, a concurrency limit of 2 with a max request duration of 5 s (group {@code kept}):
 * whatever the client does (hang up, or let the gateway's upstream read timeout cut its requests off), the upstream
 * never has more than 2 of its requests at once; the slots of requests cut off while the upstream works stay taken
 * until they expire, and the client's next requests get 429 meanwhile.
 */
@TestPropertySource(properties = { "spring.http.clients.read-timeout=500ms", "ratelimit.api-keys.kept-client=free" })
class ServerMvcKeptSlotsIntegrationTest extends ServerMvcRouteIntegrationTest {

	@AfterEach
	void letHeldRequestsGo() {
		upstream.answerHeld();
	}

	@Test
	void aClientHangingUpAgainAndAgainNeverHasMoreThanItsLimitAtTheUpstream() throws IOException {
		String key = "kept-client";
		for (int round = 0; round < 3; round++) {
			List<Socket> sockets = new ArrayList<>();
			try {
				for (int i = 0; i < 2; i++) {
					sockets.add(sendRaw("/kept/hold/" + round + "-" + i, key));
				}
				if (round == 0) {
					await().atMost(Duration.ofSeconds(10)).until(() -> upstream.holding() == 2);
				}
				else {
					for (Socket socket : sockets) {
						assertThat(readHead(socket.getInputStream())).startsWith("HTTP/1.1 429")
							.containsIgnoringCase("Retry-After: ");
					}
				}
			}
			finally {
				for (Socket socket : sockets) {
					socket.close();
				}
			}
		}
		assertThat(upstream.mostHolding()).isLessThanOrEqualTo(2);
		upstream.answerHeld();
		awaitAdmittedAgain(key);
	}

	@Test
	void readTimeoutsAgainAndAgainNeverLeaveMoreThanTheLimitAtTheUpstream() {
		String key = "kept-client";
		for (int round = 0; round < 3; round++) {
			List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				String path = "/kept/hold/" + round + "-" + i;
				answers.add(CompletableFuture.supplyAsync(() -> get(path, "X-API-Key", key)));
			}
			for (CompletableFuture<HttpResponse<String>> answer : answers) {
				int status = answer.join().statusCode();
				// the first two reach the upstream and time out (a 5xx); the next ones are refused while it works
				if (round == 0) {
					assertThat(status).isGreaterThanOrEqualTo(500);
				}
				else {
					assertThat(status).isEqualTo(429);
				}
			}
		}
		assertThat(upstream.holding()).isEqualTo(2);
		assertThat(upstream.mostHolding()).isLessThanOrEqualTo(2);
		upstream.answerHeld();
		awaitAdmittedAgain(key);
	}

	/** The kept slots free themselves at max-request-duration: the client is admitted again. */
	private void awaitAdmittedAgain(String key) {
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(250))
			.until(() -> get("/kept/" + UUID.randomUUID(), "X-API-Key", key).statusCode() == 200);
	}

	private Socket sendRaw(String path, String key) throws IOException {
		Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), this.port);
		socket.setSoTimeout(10_000);
		OutputStream out = socket.getOutputStream();
		out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + key + "\r\n\r\n")
			.getBytes(StandardCharsets.ISO_8859_1));
		out.flush();
		return socket;
	}

	private static String readHead(InputStream in) throws IOException {
		StringBuilder text = new StringBuilder();
		int b;
		while (text.indexOf("\r\n\r\n") < 0 && (b = in.read()) >= 0) {
			text.append((char) b);
		}
		return text.toString();
	}

}
