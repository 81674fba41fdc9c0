package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.gateway.chain.CheckListener;
import io.github.ratelimit.gateway.chain.LimiterChainCustomizer;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 29: a gateway whose context is stopped and started again (a checkpoint and restore) serves on new event loops
 * (its {@link ReactorResourceFactory} disposes its loops on stop and makes new ones on start), and the store's
 * connections follow them: after the restart, checks decided by Redis complete on the server's new loops, as before
 * it.
 */
class EventLoopChecksAfterRestartIntegrationTest {

	private static final TestRedis redis = TestRedis.shared();

	/** The threads the checks decided by Redis completed on, in order. */
	private static final List<Thread> answeredOn = new CopyOnWriteArrayList<>();

	@Test
	void checksFollowTheServersNewEventLoopsAfterARestart() {
		ConfigurableApplicationContext gateway = new SpringApplicationBuilder(GatewayTestApplication.class)
			.profiles("gateway-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> {
				context.registerBean(TestContextCloseIntegrationTest.OwnEventLoops.class);
				context.registerBean(LimiterChainCustomizer.class, EventLoopChecksAfterRestartIntegrationTest::recording);
			})
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port());
		try {
			ReactorResourceFactory resources = gateway.getBean(ReactorResourceFactory.class);
			assertThat(resources.isUseGlobalResources()).isFalse();
			int port = Integer.parseInt(gateway.getEnvironment().getRequiredProperty("local.server.port"));
			awaitChecksOnServerLoops(port, resources);
			List<Thread> before = List.copyOf(answeredOn);

			gateway.stop();
			gateway.start();

			port = Integer.parseInt(gateway.getEnvironment().getRequiredProperty("local.server.port"));
			awaitChecksOnServerLoops(port, resources);
			assertThat(answeredOn).as("the loops after the restart are new ones").doesNotContainAnyElementsOf(before);
			answeredOn.clear();
			for (int i = 0; i < 10; i++) {
				get(port, "/b/" + i, "key-two").expectStatus().isOk().expectHeader().exists("RateLimit");
			}
			assertThat(answeredOn).hasSize(10).allMatch((thread) -> isServerEventLoop(thread, resources),
					"a server event loop");
		}
		finally {
			gateway.close();
		}
	}

	/** The loops' connections open in the background: until then checks go out on the shared connection. */
	private static void awaitChecksOnServerLoops(int port, ReactorResourceFactory resources) {
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			answeredOn.clear();
			get(port, "/b/warm", "load-warm" + System.nanoTime()).expectStatus().isOk();
			assertThat(answeredOn).singleElement()
				.matches((thread) -> isServerEventLoop(thread, resources), "a server event loop");
		});
	}

	private static boolean isServerEventLoop(Thread thread, ReactorResourceFactory resources) {
		List<?> loops = ReactorNettyEventLoops.of(resources).eventLoops();
		return !loops.isEmpty() && ReactorNettyEventLoops.of(resources)
			.eventLoops()
			.stream()
			.anyMatch((loop) -> loop.inEventLoop(thread));
	}

	private static WebTestClient.ResponseSpec get(int port, String path, String apiKey) {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(10))
			.build()
			.get()
			.uri(path)
			.header("X-API-Key", apiKey)
			.exchange();
	}

	private static LimiterChainCustomizer recording() {
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
