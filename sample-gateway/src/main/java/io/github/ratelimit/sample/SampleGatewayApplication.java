package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A runnable Spring Cloud Gateway limited by the {@code RateLimit} filter of the rate limiting starter.
 *
 * <p>Routes and plans are in {@code application.yml}. Without {@code UPSTREAM_URI} the routes go to a small demo
 * upstream started inside the application ({@link DemoUpstreamInitializer}), so the demo needs nothing but Redis
 * ({@code REDIS_HOST}/{@code REDIS_PORT}, default {@code localhost:6379}); without Redis requests pass unlimited.
 */
@SpringBootApplication
public class SampleGatewayApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleGatewayApplication.class, args);
	}

}
