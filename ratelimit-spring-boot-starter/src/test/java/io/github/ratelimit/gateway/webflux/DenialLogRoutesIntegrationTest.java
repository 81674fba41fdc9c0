package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.micrometer.core.instrument.Counter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The denial log through real HTTP into a real gateway with a real Redis: per client and endpoint group one full
 * line per interval ({@code ratelimit.denial-log-interval}, 5 s here), then one summary line with the count, while
 * the decisions meter still counts every denial.
 */
@ExtendWith(OutputCaptureExtension.class)
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = "ratelimit.denial-log-interval=5s")
class DenialLogRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Test
	void oneFullLinePerClientAndIntervalThenOneSummaryWithTheCount(CapturedOutput output) {
		WebClient web = webClient();
		double deniedBefore = deniedDecisions();
		// route a: 2 tokens per client, then denials (by Redis, then by the over-limit cache: outcome denied)
		assertThat(statuses(web, "key-one", 2, 1)).containsOnly(200);
		assertThat(statuses(web, "key-two", 2, 1)).containsOnly(200);
		assertThat(statuses(web, "key-one", 30, 8)).hasSize(30).containsOnly(429);
		assertThat(statuses(web, "key-two", 5, 1)).hasSize(5).containsOnly(429);
		String one = "client=k:" + ApiKeyHasher.hash("key-one") + " route=a group=a";
		String two = "client=k:" + ApiKeyHasher.hash("key-two") + " route=a group=a";
		assertThat(count(output, "Rate limit denied: " + one + " plan=free policies=[free-a] retryAfterMs=")).isOne();
		assertThat(count(output, "Rate limit denied: " + two + " plan=free policies=[free-a] retryAfterMs=")).isOne();

		// no further traffic: the summaries come from the timer, a little after the 5 s
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(output.getOut())
			.contains("Rate limit denials: 29 more for " + one + " in the last 5 s")
			.contains("Rate limit denials: 4 more for " + two + " in the last 5 s"));
		// only this context's lines: the JVM's output also holds the summaries that other cached test contexts
		// (same keys, 1 m interval) write when their intervals end
		assertThat(count(output, "Rate limit denials: ", "in the last 5 s")).isEqualTo(2);
		assertThat(count(output, "Rate limit denied: " + one) + count(output, "Rate limit denied: " + two))
			.isEqualTo(2);
		assertThat(output.getOut()).doesNotContain("key-one").doesNotContain("key-two");
		// the meter saw every denial
		assertThat(deniedDecisions() - deniedBefore).isEqualTo(35);

		// a new interval: a full line again
		assertThat(statuses(web, "key-one", 1, 1)).containsOnly(429);
		assertThat(count(output, "Rate limit denied: " + one)).isEqualTo(2);
	}

	private static List<Integer> statuses(WebClient web, String apiKey, int requests, int concurrency) {
		return Flux.range(0, requests)
			.flatMap((i) -> web.get().uri("/a/" + i).header("X-API-Key", apiKey)
				.exchangeToMono((r) -> r.releaseBody().thenReturn(r.statusCode().value())), concurrency)
			.collectList()
			.block(Duration.ofSeconds(30));
	}

	/** Lines that contain both texts. */
	private static long count(CapturedOutput output, String text, String alsoContaining) {
		return output.getOut().lines().filter((line) -> line.contains(text) && line.contains(alsoContaining)).count();
	}

	private static int count(CapturedOutput output, String text) {
		Matcher matcher = Pattern.compile(Pattern.quote(text)).matcher(output.getOut());
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

	private double deniedDecisions() {
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.DECISIONS).tag("route", "a")
			.tag("outcome", "denied").counter();
		return (counter != null) ? counter.count() : 0;
	}

}
