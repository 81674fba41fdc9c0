package io.github.ratelimit.frontends;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter's two front ends, each started as a real gateway ({@link FrontEndsTestApplication}) on a random port, in
 * a Spring context of its own: Gateway on WebFlux (a reactive application, Reactor Netty) and Gateway Server MVC (a
 * servlet application, Tomcat, platform threads). Both Gateways are on this module's class path; each application
 * gets only its own front end of the starter, and Gateway Server MVC only configures a servlet application; Gateway on
 * WebFlux's auto-configurations that do not look at the kind of application (among them its check that refuses a
 * servlet application with Spring MVC present) are left out of the Server MVC gateway.
 */
enum FrontEnd {

	WEBFLUX(WebApplicationType.REACTIVE, List.of()),

	SERVER_MVC(WebApplicationType.SERVLET, List.of("--spring.autoconfigure.exclude=" + String.join(",",
			"org.springframework.cloud.gateway.config.GatewayClassPathWarningAutoConfiguration",
			"org.springframework.cloud.gateway.config.GatewayAutoConfiguration",
			"org.springframework.cloud.gateway.config.GatewayRedisAutoConfiguration",
			"org.springframework.cloud.gateway.config.GatewayResilience4JCircuitBreakerAutoConfiguration",
			"org.springframework.cloud.gateway.config.GatewayMetricsAutoConfiguration")));

	private final WebApplicationType type;

	private final List<String> arguments;

	FrontEnd(WebApplicationType type, List<String> arguments) {
		this.type = type;
		this.arguments = arguments;
	}

	/**
	 * Start a gateway of this front end.
	 * @param properties properties of this gateway, over {@code application.yml}'s
	 * @return the running gateway
	 */
	Gateway start(Map<String, String> properties) {
		List<String> args = new ArrayList<>();
		args.add("--server.port=0");
		args.addAll(this.arguments);
		properties.forEach((name, value) -> args.add("--" + name + "=" + value));
		ConfigurableApplicationContext context = new SpringApplicationBuilder(FrontEndsTestApplication.class)
			.web(this.type)
			.run(args.toArray(String[]::new));
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return new Gateway(this, context, port);
	}

	/**
	 * A running gateway.
	 * @param frontEnd its front end
	 * @param context its Spring context
	 * @param port its HTTP port on 127.0.0.1
	 */
	record Gateway(FrontEnd frontEnd, ConfigurableApplicationContext context, int port) {

		void stop() {
			this.context.close();
		}

	}

}
