package io.github.ratelimit.gateway.metrics;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMetricsTest {

	private static final LimitDefinition LIMIT = new LimitDefinition("p-g", 1, 1, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("p", "g", List.of(LIMIT));

	@Test
	void outcomes() {
		RateLimitDecision allowed = RateLimitDecision.shared(LIMITS, true, List.of(new LimitStatus(LIMIT, true, 0, 0, 1)));
		RateLimitDecision denied = RateLimitDecision.shared(LIMITS, false, List.of(new LimitStatus(LIMIT, false, 0, 1, 1)));
		RateLimitDecision local = new RateLimitDecision(LIMITS, false, List.of(new LimitStatus(LIMIT, false, 0, 1, 1)),
				RateLimitDecision.Source.LOCAL_FALLBACK);
		assertThat(RateLimitMetrics.outcome(allowed, false)).isEqualTo("allowed");
		assertThat(RateLimitMetrics.outcome(denied, false)).isEqualTo("denied");
		assertThat(RateLimitMetrics.outcome(denied, true)).isEqualTo("shadow-denied");
		assertThat(RateLimitMetrics.outcome(allowed, true)).isEqualTo("allowed");
		assertThat(RateLimitMetrics.outcome(local, false)).isEqualTo("fallback-denied");
		assertThat(RateLimitMetrics.outcome(RateLimitDecision.failedClosed(LIMITS), false)).isEqualTo("failed-closed");
		assertThat(RateLimitMetrics.outcome(RateLimitDecision.unavailable(LIMITS), false)).isEqualTo("unchecked");
	}

	@Test
	void errorKinds() {
		assertThat(RateLimitMetrics.errorKind(new TimeoutException())).isEqualTo("timeout");
		assertThat(RateLimitMetrics.errorKind(CallNotPermittedException
			.createCallNotPermittedException(CircuitBreaker.ofDefaults("x")))).isEqualTo("circuit-open");
		assertThat(RateLimitMetrics.errorKind(new RedisConnectionFailureException("down", new ConnectException())))
			.isEqualTo("connection");
		assertThat(RateLimitMetrics.errorKind(new RedisSystemException("Redis exception",
				new RedisCommandExecutionException("ERR Error running script")))).isEqualTo("script");
		assertThat(RateLimitMetrics.errorKind(new IOException("reset"))).isEqualTo("connection");
		assertThat(RateLimitMetrics.errorKind(new io.lettuce.core.RedisCommandTimeoutException("Command timed out")))
			.isEqualTo("timeout"); // Lettuce's own command timeout, a RedisException
		assertThat(RateLimitMetrics.errorKind(new IllegalStateException("?"))).isEqualTo("other");
	}

}
