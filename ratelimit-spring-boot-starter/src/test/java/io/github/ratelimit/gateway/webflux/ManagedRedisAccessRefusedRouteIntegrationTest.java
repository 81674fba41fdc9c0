package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The base of the route tests against a managed Redis that refuses the limiter: the gateway starts, logs ONE WARN at
 * start-up naming the property to fix and what requests get meanwhile, and answers every request from the fallback
 * (normal routes: the local limiter; critical routes: 503), with no stack trace in the log however many requests
 * come.
 */
abstract class ManagedRedisAccessRefusedRouteIntegrationTest extends ManagedRedisRouteIntegrationTest {

	/** Requests sent per kind of route, each of which fails against Redis (until the breaker opens). */
	static final int REQUESTS = 30;

	void assertOneWarnAndFallbackAnswers(CapturedOutput output, String warning, List<String> mentions) {
		await().atMost(Duration.ofSeconds(60)).until(() -> output.getAll().contains(warning));
		for (int i = 0; i < REQUESTS; i++) {
			// normal route: the local fallback (capacity 2, one instance): 200 then 429, never RateLimit fields
			EntityExchangeResult<byte[]> normal = get("/a/" + i, "key-one").expectBody().returnResult();
			assertThat(normal.getStatus().value()).isEqualTo((i < 2) ? 200 : 429);
			assertThat(normal.getResponseHeaders().getFirst("RateLimit")).isNull();
			// critical route: fails closed
			this.client.get().uri("/auth/login").exchange().expectStatus().isEqualTo(503)
				.expectHeader().exists("Retry-After");
			// an API key only the (unreachable) plan store could know: limited by IP, not a 500
			assertThat(get("/b/" + i, "unknown-key-" + i).expectBody().returnResult().getStatus().value())
				.isIn(200, 429);
		}
		String log = output.getAll();
		List<String> warnings = log.lines().filter((line) -> line.contains(warning)).toList();
		assertThat(warnings).hasSize(1);
		System.out.println("The start-up WARN: " + warnings.get(0));
		assertThat(warnings.get(0)).contains(" WARN ")
			.contains("normal routes use the local fallback limiter (this instance's share of each limit), "
					+ "critical routes answer 503")
			.contains(mentions);
		assertThat(withoutOtherContextsShutdown(log)).as("stack traces in the log").doesNotContain("\tat ");
		// Netty's leak detector samples buffers at random and reports a read buffer of the test's or the gateway's
		// HTTP event loop now and then (also seen without Redis in the picture); not the limiter's concern here
		assertThat(log.lines()
			.filter((line) -> line.contains(" ERROR ") && !line.contains("io.netty.util.ResourceLeakDetector")))
			.as("ERROR lines").isEmpty();
	}

	/**
	 * The log without the records of Lettuce's reconnect watchdog refused by a client that is shutting down
	 * ({@code executor not accepting a task}, with its stack trace): written when another test's cached context is
	 * closed while its connection to a stopped Redis reconnects, at any time during this test.
	 */
	private static String withoutOtherContextsShutdown(String log) {
		StringBuilder kept = new StringBuilder();
		boolean skipping = false;
		for (String line : log.lines().toList()) {
			boolean recordStart = line.matches("^\\d{4}-\\d{2}-\\d{2}T.*");
			if (recordStart) {
				skipping = line.contains("ConnectionWatchdog") && line.contains("executor not accepting a task");
			}
			if (!skipping) {
				kept.append(line).append('\n');
			}
		}
		return kept.toString();
	}

	/** Nothing to flush: Redis refuses the gateway; only the denials this instance remembers are forgotten. */
	@Override
	protected void emptyBuckets() {
		this.overLimitCache.clear();
	}

}
