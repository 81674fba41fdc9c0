package io.github.ratelimit.gateway.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.extension.ExtendWith;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The base of the usage route tests in which a settlement fails (Redis unreachable or paused while an answer
 * streams): profile {@code usage-bounds-it}, the real {@link UsageUpstream}, the output captured for the gateway's
 * log. Each test class brings the gateway's Redis of its own ({@code spring.data.redis.url}).
 */
@ActiveProfiles("usage-bounds-it")
@ExtendWith(OutputCaptureExtension.class)
abstract class SettleFailureRouteIntegrationTest extends BaseRouteIntegrationTest {

	/** What the gateway logs when a settlement of the chat route fails. */
	static final String SETTLE_FAILED = "Could not settle a reservation in group 'chat'";

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	/**
	 * Sends a streamed chat completion of client {@code key-one} reserving 300 tokens, on a connection of its own,
	 * and waits (at most 10 s) for its first chunk: the request was admitted and the answer streams.
	 * @param query the upstream's parameters, e.g. {@code used=900&every=100} (7 events, one every 100 ms)
	 * @return the whole body, once the answer is over
	 * @throws Exception if no chunk came within 10 s
	 */
	protected CompletableFuture<String> admittedChatStream(String query) throws Exception {
		HttpClient http = HttpClient.create(ConnectionProvider.newConnection())
			.headers((h) -> h.add("X-API-Key", "key-one").add("X-Max-Tokens", "300"));
		CompletableFuture<Void> admitted = new CompletableFuture<>();
		CompletableFuture<String> body = http.get()
			.uri("http://127.0.0.1:" + this.port + "/v1/chat/completions?stream=true&" + query)
			.responseContent()
			.asString()
			.doOnNext((chunk) -> admitted.complete(null))
			.collect(Collectors.joining())
			.toFuture();
		admitted.get(10, TimeUnit.SECONDS);
		return body;
	}

}
