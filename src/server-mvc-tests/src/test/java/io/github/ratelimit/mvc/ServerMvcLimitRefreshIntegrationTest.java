package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Through the Server MVC gateway: a refresh of the limits ({@code EnvironmentChangeEvent}, as
 * {@code /actuator/refresh} publishes it) changes a group's {@code shadow} on its routes' next request, though Server
 * MVC keeps its configured filters; an asynchronous handler's response carries the fields; a Java filter whose group
 * (its route's id) the cost does not fit answers 503, never a 500.
 */
class ServerMvcLimitRefreshIntegrationTest extends ServerMvcRouteIntegrationTest {

	private static final String CHANGES = "mvc-limit-refresh-test";

	@Autowired
	ConfigurableApplicationContext context;

	@AfterEach
	void restoreConfiguration() {
		if (this.context.getEnvironment().getPropertySources().remove(CHANGES) != null) {
			this.context.publishEvent(new EnvironmentChangeEvent(this.context, Set.of("ratelimit.groups.a.shadow")));
		}
	}

	@Test
	void aGroupSwitchedToShadowModeByARefreshStopsEnforcingOnItsNextRequest() {
		assertThat(get("/a/1", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		assertThat(get("/a/2", "X-API-Key", "key-one").statusCode()).isEqualTo(200);
		assertThat(get("/a/3", "X-API-Key", "key-one").statusCode()).isEqualTo(429);
		change(Map.of("ratelimit.groups.a.critical", "false", "ratelimit.groups.a.shadow", "true"));
		HttpResponse<String> observed = get("/a/4", "X-API-Key", "key-one");
		assertThat(observed.statusCode()).isEqualTo(200);
		assertThat(observed.body()).isEqualTo("upstream");
		assertThat(get("/actuator/ratelimits").body()).contains("\"a\":{\"routeId\":\"a\",\"group\":\"a\","
				+ "\"keyBy\":\"API_KEY\",\"cost\":1,\"critical\":false,\"shadow\":true}");
	}

	@Test
	void anAsynchronousHandlersResponseCarriesTheFields() {
		HttpResponse<String> response = get("/async", "X-API-Key", "key-one");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("async");
		assertThat(response.headers().firstValue("RateLimit-Policy")).contains("\"free-fast\";q=2000;w=1");
	}

	@Test
	void aJavaFilterWhoseRoutesGroupTheCostDoesNotFitAnswers503() {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> response = get("/java/tiny", "X-API-Key", "key-one");
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("Content-Type")).contains("application/problem+json");
			assertThat(response.body()).startsWith("{\"type\":\"" + RateLimitProblems.TEMPORARY_REDUCED_CAPACITY + "\"");
		}
		assertThat(upstream.received()).isEmpty();
	}

	/** Change properties the way a configuration refresh does: new values in the Environment, then the event. */
	private void change(Map<String, Object> values) {
		this.context.getEnvironment().getPropertySources().remove(CHANGES);
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(CHANGES, values));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, values.keySet()));
	}

}
