package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.redis.RedisClientChanges;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A reset through one Server MVC instance's {@code ratelimits} endpoint reaches another Server MVC instance within a
 * second: this test's context is instance A, a second application context of the same gateway is instance B, both on
 * one real Redis. B remembers a login client's denial (minutes of Retry-After); after the reset through A, B admits
 * the client within the bound.
 */
@TestPropertySource(properties = { ServerMvcClientChangesIntegrationTest.EXPOSE,
		ServerMvcClientChangesIntegrationTest.WRITABLE, ServerMvcClientChangesIntegrationTest.SHOWN })
class ServerMvcClientChangesIntegrationTest extends ServerMvcRouteIntegrationTest {

	static final String EXPOSE = "management.endpoints.web.exposure.include=ratelimits";

	static final String WRITABLE = "management.endpoint.ratelimits.access=unrestricted";

	/** Operators only reach these instances (as a management port would be). */
	static final String SHOWN = "management.endpoint.ratelimits.show-clients=always";

	@RegisterExtension
	static final SecondInstance instanceB = new SecondInstance(EXPOSE, WRITABLE, SHOWN);

	@Autowired
	private RedisClientChanges changes;

	@Test
	void aLoginClientDeniedOnOneInstanceIsAdmittedThereWithinASecondOfAResetThroughTheOther() {
		// both subscribed: a confirmation drops every remembered denial, none may come during the test
		await().atMost(Duration.ofSeconds(10)).until(() -> this.changes.subscriptions() > 0
				&& instanceB.context().getBean(RedisClientChanges.class).subscriptions() > 0);
		OverLimitCache cacheOfB = instanceB.context().getBean(DefaultLimiterChain.class).overLimitCache();
		assertThat(cacheOfB).isNotNull();
		cacheOfB.clear();
		int portB = instanceB.port();
		assertThat(send(portB, "POST", "/auth/login").statusCode()).isEqualTo(200);
		assertThat(send(portB, "POST", "/auth/login").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = send(portB, "POST", "/auth/login");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isGreaterThan(10);
		await().atMost(Duration.ofSeconds(5)).until(() -> cacheOfB.size() == 1);

		HttpResponse<String> reset = send("DELETE", "/actuator/ratelimits/login?ip=127.0.0.1");
		assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		long resetAt = System.nanoTime();

		await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
			.until(() -> send(portB, "POST", "/auth/login").statusCode() == 200);
		System.out.printf("Reset through Server MVC instance A: B admitted %.1f ms after the endpoint's answer%n",
				(System.nanoTime() - resetAt) / 1e6);
	}

}
