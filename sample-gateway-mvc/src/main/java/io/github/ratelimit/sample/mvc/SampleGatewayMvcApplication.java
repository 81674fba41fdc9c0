package io.github.ratelimit.sample.mvc;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.thread.Threading;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;

/**
 * A runnable Spring Cloud Gateway Server MVC (servlet, Tomcat) limited by the {@code RateLimit} filter of the rate
 * limiting starter: the same plans, API keys and endpoint groups as the WebFlux sample gateway.
 *
 * <p>Most routes are in {@code application.yml}; the {@code login} route is built in Java
 * ({@link LoginRouteConfiguration}). Without {@code UPSTREAM_URI} the routes go to a small demo upstream started
 * inside the application ({@link DemoUpstreamInitializer}), so the demo needs nothing but Redis
 * ({@code REDIS_HOST}/{@code REDIS_PORT}, default {@code localhost:6379}); without Redis non-critical routes are
 * limited locally and critical ones answer 503. Requests run on virtual threads where the JVM has them
 * ({@code spring.threads.virtual.enabled}, Java 21+).
 */
@SpringBootApplication
public class SampleGatewayMvcApplication {

	private static final Logger logger = LoggerFactory.getLogger(SampleGatewayMvcApplication.class);

	public static void main(String[] args) {
		SpringApplication.run(SampleGatewayMvcApplication.class, args);
	}

	/** Says which threads serve requests: Spring Boot applies {@code spring.threads.virtual.enabled} on Java 21+. */
	@EventListener
	void ready(ApplicationReadyEvent event) {
		Environment environment = event.getApplicationContext().getEnvironment();
		if (Threading.VIRTUAL.isActive(environment)) {
			logger.info("Requests are served on virtual threads (spring.threads.virtual.enabled)");
		}
		else if (!environment.getProperty("spring.threads.virtual.enabled", Boolean.class, false)) {
			logger.info("Requests are served on platform threads (spring.threads.virtual.enabled is false)");
		}
		else {
			logger.info("Requests are served on platform threads: spring.threads.virtual.enabled takes effect on "
					+ "Java 21 or newer (this is Java {})", Runtime.version().feature());
		}
	}

}
