package io.github.ratelimit.mvc;

import java.io.IOException;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.test.OpenRequests;
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

	/**
	 * The attack of issue 27: a client sends as many requests as its limit allows, hangs up, and does it again while
	 * the upstream still works on the first ones. The upstream counts a request as in flight until its work ends,
	 * whether or not the gateway is still connected.
	 */
	@Test
	void aClientHangingUpAgainAndAgainNeverHasMoreThanItsLimitAtTheUpstream() throws IOException {
		String key = "kept-client";
		List<String> denied = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			int receivedBefore = upstream.received().size();
			List<Socket> sockets = new ArrayList<>();
			try {
				for (int i = 0; i < 2; i++) {
					sockets.add(OpenRequests.sendGet(this.port, "/kept/hold/" + round + "-" + i, key));
				}
				// each request either reached the upstream or was answered at the gateway
				await().atMost(Duration.ofSeconds(10))
					.until(() -> upstream.received().size() - receivedBefore
							+ OpenRequests.answered(sockets).size() == 2);
				for (Socket socket : OpenRequests.answered(sockets)) {
					denied.add(OpenRequests.readHead(socket.getInputStream()));
				}
			}
			finally {
				for (Socket socket : sockets) {
					socket.close(); // the client hangs up
				}
			}
		}
		assertThat(upstream.mostHolding()).as("most requests of the client the upstream worked on at once")
			.isLessThanOrEqualTo(2);
		assertThat(upstream.holding()).as("still working after the client left").isEqualTo(2);
		assertThat(denied).hasSize(4)
			.allSatisfy((head) -> assertThat(head).startsWith("HTTP/1.1 429").containsIgnoringCase("Retry-After: "));
		upstream.answerHeld();
		awaitAdmittedAgain(key);
	}

	@Test
	void readTimeoutsAgainAndAgainNeverLeaveMoreThanTheLimitAtTheUpstream() {
		String key = "kept-client";
		List<Integer> statuses = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				String path = "/kept/hold/" + round + "-" + i;
				answers.add(CompletableFuture.supplyAsync(() -> get(path, "X-API-Key", key)));
			}
			answers.forEach((answer) -> statuses.add(answer.join().statusCode()));
		}
		assertThat(upstream.mostHolding()).as("most requests of the client the upstream worked on at once")
			.isLessThanOrEqualTo(2);
		assertThat(upstream.holding()).as("still working after the gateway gave up").isEqualTo(2);
		// the first two reach the upstream and time out (a 5xx); the next ones are refused while it works
		assertThat(statuses.subList(0, 2)).allSatisfy((status) -> assertThat(status).isGreaterThanOrEqualTo(500));
		assertThat(statuses.subList(2, 6)).containsOnly(429);
		upstream.answerHeld();
		awaitAdmittedAgain(key);
	}

	/** The kept slots free themselves at max-request-duration: the client is admitted again. */
	private void awaitAdmittedAgain(String key) {
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(250))
			.until(() -> get("/kept/" + UUID.randomUUID(), "X-API-Key", key).statusCode() == 200);
	}

}
