package io.github.ratelimit.mvc;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A second Server MVC gateway instance beside a test's own (instance A), for the tests of what instances share
 * through Redis: another application context of {@link ServerMvcTestApplication}, profile {@code mvc-it}, with its own
 * Tomcat on a random port, limiter and local state, on the shared test Redis and {@link Upstream}. Registered as a
 * static {@code @RegisterExtension} field: started before the class's tests, closed after them.
 */
final class SecondInstance implements BeforeAllCallback, AfterAllCallback {

	private final String[] properties;

	private ConfigurableApplicationContext context;

	/** @param properties more properties of the instance, {@code name=value} */
	SecondInstance(String... properties) {
		this.properties = properties;
	}

	@Override
	public void beforeAll(ExtensionContext extension) {
		this.context = new SpringApplicationBuilder(ServerMvcTestApplication.class).profiles("mvc-it")
			.properties("server.port=0", "spring.data.redis.host=" + ServerMvcRouteIntegrationTest.redis.host(),
					"spring.data.redis.port=" + ServerMvcRouteIntegrationTest.redis.port(),
					"upstream.uri=" + ServerMvcRouteIntegrationTest.upstream.uri())
			.properties(this.properties)
			.run();
	}

	@Override
	public void afterAll(ExtensionContext extension) {
		if (this.context != null) {
			this.context.close();
		}
	}

	/** @return the instance's application context, once started */
	ConfigurableApplicationContext context() {
		return this.context;
	}

	/** @return the instance's HTTP port */
	int port() {
		return Integer.parseInt(this.context.getEnvironment().getProperty("local.server.port"));
	}

}
