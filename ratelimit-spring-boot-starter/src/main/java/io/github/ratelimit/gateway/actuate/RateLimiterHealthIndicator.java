package io.github.ratelimit.gateway.actuate;

import io.github.ratelimit.gateway.chain.FailurePolicyLimiter;
import io.github.ratelimit.gateway.redis.InstanceCounter;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import reactor.core.publisher.Mono;

import org.springframework.boot.health.contributor.AbstractReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports the limiter's state under the {@code rateLimiter} health component. Always {@code UP}: the gateway
 * fails open by design, so an unavailable Redis must not take the instance out of service. The details say where
 * decisions come from ({@code decisions}: {@code redis}, {@code local-fallback}, {@code unchecked}), the circuit
 * breaker state and the number of instances sharing the limits.
 */
public class RateLimiterHealthIndicator extends AbstractReactiveHealthIndicator {

	private final FailurePolicyLimiter limiter;

	private final InstanceCounter instances;

	/**
	 * Create the indicator.
	 * @param limiter the failure policy holding the circuit breaker
	 * @param instances knows the instance count
	 */
	public RateLimiterHealthIndicator(FailurePolicyLimiter limiter, InstanceCounter instances) {
		super("Rate limiter health check failed");
		this.limiter = limiter;
		this.instances = instances;
	}

	@Override
	protected Mono<Health> doHealthCheck(Health.Builder builder) {
		CircuitBreaker breaker = this.limiter.getCircuitBreaker();
		CircuitBreaker.State state = breaker.getState();
		boolean shared = state == CircuitBreaker.State.CLOSED || state == CircuitBreaker.State.HALF_OPEN
				|| state == CircuitBreaker.State.DISABLED;
		String decisions = shared ? "redis"
				: (this.limiter.getMode() == io.github.ratelimit.gateway.chain.FallbackMode.LOCAL)
						? "local-fallback" : "unchecked";
		return Mono.just(builder.up()
			.withDetail("decisions", decisions)
			.withDetail("circuitBreaker", state.name())
			.withDetail("failureRate", breaker.getMetrics().getFailureRate())
			.withDetail("instances", this.instances.instances())
			.withDetail("instancesLearned", this.instances.isLearned())
			.build());
	}

}
