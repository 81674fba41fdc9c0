package io.github.ratelimit.gateway.webflux;

import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * Starts the concurrency tests' gateway ({@link GatewayTestApplication}, profile {@code concurrency-it}) as a process
 * of its own, for the test that kills an instance with requests in flight.
 */
public final class ConcurrencyGatewayMain {

	private ConcurrencyGatewayMain() {
	}

	/**
	 * Run the gateway until the process is killed.
	 * @param args Spring Boot command-line properties (ports, Redis, upstream)
	 */
	public static void main(String[] args) {
		new SpringApplicationBuilder(GatewayTestApplication.class).profiles("concurrency-it").run(args);
	}

}
