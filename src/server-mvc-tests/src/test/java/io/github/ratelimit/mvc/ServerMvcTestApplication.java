package io.github.ratelimit.mvc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.route.RateLimitArguments;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static io.github.ratelimit.gateway.mvc.RateLimitFilterFunctions.rateLimit;
import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;

/**
 * The Server MVC gateway of this module's tests: the routes of {@code application-mvc-it.yml}, and routes built with
 * Gateway's Java DSL ({@code /java/**}, the same groups as configured ones, so both share buckets), one of which
 * answers itself and names the thread it ran on.
 */
@SpringBootApplication
public class ServerMvcTestApplication {

	/** Response header of {@code /thread}: whether the request ran on a virtual thread. */
	static final String VIRTUAL_THREAD = "X-Virtual-Thread";

	@Bean
	RouterFunction<ServerResponse> javaRoutes(@Value("${upstream.uri}") String upstream) {
		return route("java-a").GET("/java/a/**", http())
			.before(uri(upstream))
			.filter(rateLimit("a"))
			.build()
			.and(route("thread").GET("/thread", (request) -> ServerResponse.ok()
				.header(VIRTUAL_THREAD, Boolean.toString(isVirtual(Thread.currentThread())))
				.body("thread"))
				.filter(rateLimit(new RateLimitArguments().setGroup("fast").setKeyBy(KeyBy.API_KEY)))
				.build())
			// an asynchronous handler: its response's headers exist only once the future completes
			.and(route("async").GET("/async", (request) -> ServerResponse.async(CompletableFuture.supplyAsync(
					() -> ServerResponse.ok().body("async"), CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS))))
				.filter(rateLimit("fast"))
				.build())
			// no group: the route's id is the group, whose limit (capacity 1) the cost does not fit; the plans'
			// default limits (checked at start-up) it does
			.and(route("tiny").GET("/java/tiny", http())
				.before(uri(upstream))
				.filter(rateLimit(new RateLimitArguments().setCost(2L)))
				.build());
	}

	/** Whether a thread is virtual, on any Java version (the tests compile for Java 17, which has none). */
	static boolean isVirtual(Thread thread) {
		return thread.getClass().getName().equals("java.lang.VirtualThread");
	}

	public static void main(String[] args) {
		SpringApplication.run(ServerMvcTestApplication.class, args);
	}

}
