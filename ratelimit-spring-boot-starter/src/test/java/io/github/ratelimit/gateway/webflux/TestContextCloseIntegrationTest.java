package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway test context (the test configuration, a live Redis, a request served) closes within a second, so that
 * the JVM of this module's tests, whose shutdown hook closes every cached test context one after another, exits
 * within the 30 s Surefire allows (issue 27, part 5). The context runs on event loops of its own, as spring-boot-test
 * gives each of its contexts, and its close includes disposing them.
 */
class TestContextCloseIntegrationTest {

	/** Longest a close may take: below Reactor Netty's default shutdown quiet period of 2 s. */
	private static final Duration CLOSE_BOUND = Duration.ofSeconds(1);

	private static final TestRedis redis = TestRedis.shared();

	private static final MachineStalls stalls = MachineStalls.meter();

	@Test
	void aGatewayTestContextClosesWithinASecond() {
		ConfigurableApplicationContext gateway = new SpringApplicationBuilder(GatewayTestApplication.class)
			.profiles("gateway-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(OwnEventLoops.class))
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port());
		try {
			WebTestClient.bindToServer()
				.baseUrl("http://127.0.0.1:" + gateway.getEnvironment().getRequiredProperty("local.server.port"))
				.responseTimeout(Duration.ofSeconds(10))
				.build()
				.get()
				.uri("/fast/x")
				.header("X-API-Key", "key-one")
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.exists("RateLimit");
		}
		finally {
			long start = System.nanoTime();
			gateway.close();
			long end = System.nanoTime();
			long stalled = stalls.stalledNanos(start, end);
			System.out.println("Closed a gateway test context in " + (end - start) / 1_000_000
					+ " ms (the machine stood still " + stalled / 1_000_000 + " ms of that)");
			assertThat(Duration.ofNanos(end - start - stalled)).isLessThan(CLOSE_BOUND);
		}
	}

	/**
	 * Gives the context's {@link ReactorResourceFactory} event loops of its own, as spring-boot-test does for its
	 * contexts (and so that closing this context stops nothing of the cached ones).
	 */
	static final class OwnEventLoops implements BeanPostProcessor {

		@Override
		public Object postProcessBeforeInitialization(Object bean, String beanName) {
			if (bean instanceof ReactorResourceFactory resources) {
				resources.setUseGlobalResources(false);
			}
			return bean;
		}

	}

}
