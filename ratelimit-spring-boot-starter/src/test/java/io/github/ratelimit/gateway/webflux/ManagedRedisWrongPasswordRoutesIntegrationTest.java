package io.github.ratelimit.gateway.webflux;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

/**
 * A managed Redis that refuses the limiter's password ({@code WRONGPASS}): one start-up WARN naming
 * {@code spring.data.redis.username/password}, fallback answers, no stack trace.
 */
@ActiveProfiles("gateway-it")
@ExtendWith(OutputCaptureExtension.class)
@TestPropertySource(properties = { "spring.data.redis.username=" + ManagedRedisRouteIntegrationTest.USER,
		"spring.data.redis.password=not-the-password", "ratelimit.plan-store.type=redis",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=200ms" })
class ManagedRedisWrongPasswordRoutesIntegrationTest extends ManagedRedisAccessRefusedRouteIntegrationTest {

	@Test
	void startsLogsOneWarnNamingThePasswordPropertyAndAnswersFromTheFallback(CapturedOutput output) {
		assertOneWarnAndFallbackAnswers(output, "Rate limiter: Redis refused the credentials",
				List.of("WRONGPASS", "spring.data.redis.username", "spring.data.redis.password"));
	}

}
