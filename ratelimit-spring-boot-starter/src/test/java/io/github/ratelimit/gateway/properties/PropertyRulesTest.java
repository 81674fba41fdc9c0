package io.github.ratelimit.gateway.properties;

import java.time.Duration;

import io.github.ratelimit.gateway.http.HeaderStyle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PropertyRules}: the rules declared on the properties' fields name the property in kebab case (nested
 * properties included) and give the reason and fix the validator gave before the rules were declared, word for word.
 */
class PropertyRulesTest {

	@Test
	void defaultsBreakNoRule() {
		assertThat(PropertyRules.check(new RateLimitProperties(), RateLimitProperties.PREFIX)).isEmpty();
		assertThat(new PlanStoreProperties().validate()).isEmpty();
		assertThat(new ClientIpProperties().validate()).isEmpty();
	}

	@Test
	void eachRuleOfTheRateLimitPropertiesNamesItsPropertyReasonAndFix() {
		RateLimitProperties p = new RateLimitProperties();
		p.setApiKeyHeader(" ");
		p.setTrustedProxies(33);
		p.setHeaderStyle(null);
		p.setRedisTimeout(Duration.ZERO);
		p.getCircuitBreaker().setFailureRateThreshold(0);
		p.getCircuitBreaker().setSlidingWindowSize(0);
		p.getCircuitBreaker().setWaitDurationInOpenState(Duration.ofNanos(999_999));
		p.getFallback().setHeartbeatInterval(Duration.ofMillis(99));
		p.getLeases().setDuration(Duration.ofSeconds(11));
		p.getOverLimitCache().setMaxEntries(0);
		p.setKeyPrefix("rl key");
		assertThat(PropertyRules.check(p, RateLimitProperties.PREFIX)).extracting(ConfigurationViolation::toString)
			.containsExactly(
					"ratelimit.api-key-header: must not be empty. Fix: name the request header that carries the API "
							+ "key, e.g. X-API-Key.",
					"ratelimit.trusted-proxies: must be between 0 and 32, was 33. Fix: set it to the number of "
							+ "reverse proxies in front of the gateway (0 if none).",
					"ratelimit.header-style: must be set. Fix: use one of ietf, legacy, both, none.",
					"ratelimit.redis-timeout: must be positive, was PT0S. Fix: set a duration such as 100ms.",
					"ratelimit.circuit-breaker.failure-rate-threshold: must be above 0 and at most 100 (percent), "
							+ "was 0.0. Fix: use e.g. 50.",
					"ratelimit.circuit-breaker.sliding-window-size: must be at least 1, was 0. Fix: use e.g. 20.",
					"ratelimit.circuit-breaker.wait-duration-in-open-state: must be at least 1ms, was PT0.000999999S. "
							+ "Fix: use e.g. 5s.",
					"ratelimit.fallback.heartbeat-interval: must be at least 100ms, was PT0.099S. Fix: use e.g. 5s.",
					"ratelimit.over-limit-cache.max-entries: must be at least 1, was 0. Fix: use e.g. 100000, or set "
							+ "over-limit-cache.enabled=false.",
					"ratelimit.leases.duration: must be above 0 and at most 10s, was PT11S. Fix: set a short duration "
							+ "such as 500ms or 1s (unspent leased tokens are held that long).",
					"ratelimit.key-prefix: must be letters, digits, '-', '_', ':' or '.', was 'rl key'. Fix: use a "
							+ "short prefix such as rl.");
	}

	@Test
	void optionalValuesAreCheckedOnlyWhenSet() {
		PlanStoreProperties p = new PlanStoreProperties();
		p.setKeyPrefix(" ");
		p.setTimeout(Duration.ofMillis(-1));
		p.setMaxLookupsPerSecond(-1);
		p.getCache().setMaxSize(0);
		p.getCache().setTtl(null);
		p.getCache().setNegativeTtl(Duration.ofSeconds(-1));
		assertThat(p.validate()).extracting(ConfigurationViolation::toString)
			.containsExactly(
					"ratelimit.plan-store.key-prefix: must not be blank. Fix: remove it (default rl:plan:) or set the "
							+ "prefix the provisioning side writes, e.g. rl:plan:.",
					"ratelimit.plan-store.timeout: must be positive, was PT-0.001S. Fix: remove it (default: "
							+ "ratelimit.redis-timeout) or set e.g. 20ms.",
					"ratelimit.plan-store.max-lookups-per-second: must be 0 (no bound) or positive, was -1. Fix: set "
							+ "the most look-ups per second of uncached keys, e.g. 5000.",
					"ratelimit.plan-store.cache.max-size: must be at least 1, was 0. Fix: set the most API keys "
							+ "cached per instance, e.g. 100000 (about 36 MB).",
					"ratelimit.plan-store.cache.ttl: must be positive, was null. Fix: set how long a looked-up plan "
							+ "is used before it is looked up again, e.g. 5m (plan changes and revocations take "
							+ "effect within it).",
					"ratelimit.plan-store.cache.negative-ttl: must be 0 or positive, was PT-1S. Fix: set how long an "
							+ "unknown key stays known as unknown, e.g. 30s (0 looks unknown keys up every time).");
		p.setKeyPrefix(null);
		p.setTimeout(null);
		p.setMaxLookupsPerSecond(0);
		p.getCache().setMaxSize(1);
		p.getCache().setTtl(Duration.ofSeconds(1));
		p.getCache().setNegativeTtl(Duration.ZERO);
		assertThat(p.validate()).isEmpty();
	}

	@Test
	void rangeBoundsAreInclusiveAndNameTheirUnit() {
		ClientIpProperties ip = new ClientIpProperties();
		ip.setIpv6PrefixLength(129);
		assertThat(ip.validate()).extracting(ConfigurationViolation::toString)
			.containsExactly("ratelimit.client-ip.ipv6-prefix-length: must be between 1 and 128 bits, was 129. Fix: "
					+ "set the IPv6 prefix that identifies one client: 64 (the default) for a host or site, 56 or 48 "
					+ "for a whole customer allocation, 128 for every address on its own.");
		ip.setIpv6PrefixLength(128);
		assertThat(ip.validate()).isEmpty();
		RateLimitProperties p = new RateLimitProperties();
		p.setTrustedProxies(32);
		p.getCircuitBreaker().setFailureRateThreshold(100);
		p.getCircuitBreaker().setWaitDurationInOpenState(Duration.ofMillis(1));
		p.getFallback().setHeartbeatInterval(Duration.ofMillis(100));
		p.getLeases().setDuration(Duration.ofSeconds(10));
		p.setHeaderStyle(HeaderStyle.NONE);
		assertThat(PropertyRules.check(p, RateLimitProperties.PREFIX)).isEmpty();
	}

}
