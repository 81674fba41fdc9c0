package io.github.ratelimit.gateway.webflux;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

/**
 * A managed Redis whose ACL user may run every command of the minimal rule, but on keys {@code cache:*} only, not
 * under {@code ratelimit.key-prefix} ({@code NOPERM}): one start-up WARN naming the rule and the prefix, fallback
 * answers, no stack trace.
 */
@ActiveProfiles("gateway-it")
@ExtendWith(OutputCaptureExtension.class)
@TestPropertySource(properties = {
		"spring.data.redis.username=" + ManagedRedisRouteIntegrationTest.OTHER_KEYS_USER,
		"spring.data.redis.password=" + ManagedRedisRouteIntegrationTest.PASSWORD, "ratelimit.plan-store.type=redis",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=200ms" })
class ManagedRedisAclRefusedRoutesIntegrationTest extends ManagedRedisAccessRefusedRouteIntegrationTest {

	@Test
	void startsLogsOneWarnNamingTheAclRuleAndKeyPrefixAndAnswersFromTheFallback(CapturedOutput output) {
		assertOneWarnAndFallbackAnswers(output, "Rate limiter: the Redis ACL user",
				List.of("NOPERM", "ratelimit.key-prefix 'rl'", "ACL SETUSER <user> " + MINIMAL_RULE,
						"rate limit checks", "instance heartbeats", "plan look-ups"));
	}

}
