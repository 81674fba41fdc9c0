package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.gateway.chain.CheckListener;
import io.github.ratelimit.gateway.chain.LimiterChainCustomizer;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.redis.ServerEventLoops;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 29: through the real gateway and a real Redis, a check is answered on the event loop the request is handled
 * on (the store's connection of that loop), not on one of Lettuce's own threads: the store knows the server's
 * loops, and every check decided by Redis completes on a server thread.
 */
@ActiveProfiles("gateway-it")
@Import(EventLoopChecksRoutesIntegrationTest.ThreadRecording.class)
class EventLoopChecksRoutesIntegrationTest extends BaseRouteIntegrationTest {

	/** The threads the checks decided by Redis completed on, in order. */
	private static final List<Thread> answeredOn = new CopyOnWriteArrayList<>();

	@Autowired
	private ServerEventLoops serverEventLoops;

	@Test
	void checksDecidedByRedisCompleteOnTheServersEventLoops() {
		assertThat(this.serverEventLoops.eventLoops()).isNotEmpty();
		// the loops' connections open in the background at start-up: until then checks go out on the shared one
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			answeredOn.clear();
			get("/b/warm", "load-warm" + answeredOn.size() + System.nanoTime()).expectStatus().isOk();
			assertThat(answeredOn).singleElement().matches(this::isServerEventLoop, "a server event loop");
		});
		answeredOn.clear();
		for (int i = 0; i < 10; i++) {
			get("/b/" + i, "key-two").expectStatus().isOk();
		}
		assertThat(answeredOn).hasSize(10).allMatch(this::isServerEventLoop, "a server event loop");
	}

	private boolean isServerEventLoop(Thread thread) {
		return this.serverEventLoops.eventLoops().stream().anyMatch((loop) -> loop.inEventLoop(thread));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ThreadRecording {

		@Bean
		LimiterChainCustomizer recordAnsweringThreads() {
			return (builder) -> builder.listener(new CheckListener() {

				@Override
				public void recordCheck(RateLimitDecision.Source source, long nanos) {
					if (source == RateLimitDecision.Source.SHARED) {
						answeredOn.add(Thread.currentThread());
					}
				}

			});
		}

	}

}
