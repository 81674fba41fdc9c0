package io.github.ratelimit.gateway.filter;

import java.util.stream.Collectors;

import io.github.ratelimit.gateway.config.RateLimitProperties.DenialLogLevel;
import io.github.ratelimit.gateway.key.ApiKeyHasher;
import io.github.ratelimit.gateway.key.ClientKey;
import io.github.ratelimit.gateway.limiter.RateLimitDecision;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Writes one log line per refused request (logger {@code io.github.ratelimit.gateway.denials}), with key-value pairs
 * that Spring Boot's structured logging renders as fields: {@code client} (hashed: an API key's hash, or the SHA-256
 * prefix of the IP address, never the raw value), {@code route}, {@code group}, {@code plan}, {@code policies} (the
 * violated ones), {@code outcome}, {@code retryAfterMs}.
 */
final class DenialLog {

	private static final Logger logger = LoggerFactory.getLogger("io.github.ratelimit.gateway.denials");

	private final Level level;

	DenialLog(DenialLogLevel level) {
		this.level = switch (level) {
			case OFF -> null;
			case ERROR -> Level.ERROR;
			case WARN -> Level.WARN;
			case INFO -> Level.INFO;
			case DEBUG -> Level.DEBUG;
			case TRACE -> Level.TRACE;
		};
	}

	void denied(ClientKey client, String route, String group, RateLimitDecision decision, boolean shadow) {
		if (this.level == null || !logger.isEnabledForLevel(this.level)) {
			return;
		}
		String id = client.kind().tag() + ":"
				+ ((client.kind() == ClientKey.Kind.API_KEY) ? client.id() : ApiKeyHasher.hash(client.id()));
		String policies = decision.violated().stream().map((s) -> s.limit().policyName()).collect(Collectors.joining(","));
		String outcome = RateLimitMetrics.outcome(decision, shadow);
		LoggingEventBuilder event = logger.atLevel(this.level)
			.addKeyValue("client", id)
			.addKeyValue("route", route)
			.addKeyValue("group", group)
			.addKeyValue("plan", decision.limits().plan())
			.addKeyValue("policies", policies)
			.addKeyValue("outcome", outcome)
			.addKeyValue("retryAfterMs", decision.retryAfterMillis());
		event.log("Rate limit {}: client={} route={} group={} plan={} policies=[{}] retryAfterMs={}", outcome, id, route,
				group, decision.limits().plan(), policies, decision.retryAfterMillis());
	}

}
