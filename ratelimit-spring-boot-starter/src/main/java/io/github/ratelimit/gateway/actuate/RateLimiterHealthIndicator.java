package io.github.ratelimit.gateway.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.chain.ShardCircuitBreakers;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.redis.InstanceCounter;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports the limiter's state under the {@code rateLimiter} health component. Always {@code UP}: the gateway
 * fails open by design, so an unavailable Redis must not take the instance out of service, and an upstream
 * protection that sheds is doing its job. The details:
 * <ul>
 * <li>{@code decisions}: where decisions come from: {@code redis}; {@code local-fallback} or {@code unchecked}
 * (per {@code ratelimit.fallback.mode}) when every shard's breaker is open; {@code redis-and-local-fallback} or
 * {@code redis-and-unchecked} when only some are (a Redis Cluster with failed masters);</li>
 * <li>{@code circuitBreaker}: the worst breaker state ({@code OPEN} if any is open, then {@code HALF_OPEN}, then
 * {@code CLOSED}); {@code failureRate}: the highest failure rate in percent ({@code -1} until a breaker has its
 * minimum number of calls);</li>
 * <li>{@code shards}: each shard's breaker state ({@code single} for standalone Redis, {@code host:port} per
 * Cluster master); {@code degradedShards}: the shards whose breaker is not closed;</li>
 * <li>{@code instances}, {@code instancesLearned}: the number of instances sharing the limits;</li>
 * <li>{@code protections} (only when {@code ratelimit.protections} has some): each upstream protection by name, with
 * {@code kind} ({@code adaptive} or {@code fixed}), an adaptive one's {@code algorithm}, {@code min} and {@code max},
 * {@code limit} (now), {@code inFlight} (requests in flight now by priority) and {@code shadow}.</li>
 * </ul>
 */
public class RateLimiterHealthIndicator extends AbstractHealthIndicator {

	private final FallbackMode mode;

	private final ShardCircuitBreakers breakers;

	private final InstanceCounter instances;

	private final UpstreamProtections protections;

	/**
	 * Create the indicator, without upstream protections.
	 * @param mode what requests that fail open get while their shard is unavailable
	 * @param breakers the store shards' circuit breakers
	 * @param instances knows the instance count
	 */
	public RateLimiterHealthIndicator(FallbackMode mode, ShardCircuitBreakers breakers, InstanceCounter instances) {
		this(mode, breakers, instances, UpstreamProtections.NONE);
	}

	/**
	 * Create the indicator.
	 * @param mode what requests that fail open get while their shard is unavailable
	 * @param breakers the store shards' circuit breakers
	 * @param instances knows the instance count
	 * @param protections the upstream protections, shown in the details
	 */
	public RateLimiterHealthIndicator(FallbackMode mode, ShardCircuitBreakers breakers, InstanceCounter instances,
			UpstreamProtections protections) {
		super("Rate limiter health check failed");
		this.mode = mode;
		this.breakers = breakers;
		this.instances = instances;
		this.protections = protections;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, String> shards = new LinkedHashMap<>();
		List<String> degraded = new ArrayList<>();
		CircuitBreaker.State worst = CircuitBreaker.State.CLOSED;
		float failureRate = -1;
		int open = 0;
		for (Map.Entry<String, CircuitBreaker> shard : this.breakers.current().entrySet()) {
			CircuitBreaker breaker = shard.getValue();
			CircuitBreaker.State state = breaker.getState();
			shards.put(shard.getKey(), state.name());
			if (!sharesDecisions(state)) {
				open++;
			}
			if (!sharesDecisions(state) || state == CircuitBreaker.State.HALF_OPEN) {
				degraded.add(shard.getKey());
			}
			if (rank(state) > rank(worst)) {
				worst = state;
			}
			failureRate = Math.max(failureRate, breaker.getMetrics().getFailureRate());
		}
		String local = (this.mode == FallbackMode.LOCAL) ? "local-fallback" : "unchecked";
		String decisions = (open == 0) ? "redis" : (open == shards.size()) ? local : "redis-and-" + local;
		builder.up()
			.withDetail("decisions", decisions)
			.withDetail("circuitBreaker", worst.name())
			.withDetail("failureRate", failureRate)
			.withDetail("shards", shards)
			.withDetail("degradedShards", degraded)
			.withDetail("instances", this.instances.instances())
			.withDetail("instancesLearned", this.instances.isLearned());
		if (!this.protections.all().isEmpty()) {
			builder.withDetail("protections", ProtectionDetails.of(this.protections));
		}
	}

	/** Whether calls go to Redis in this state (half-open lets trial calls through). */
	private static boolean sharesDecisions(CircuitBreaker.State state) {
		return state == CircuitBreaker.State.CLOSED || state == CircuitBreaker.State.HALF_OPEN
				|| state == CircuitBreaker.State.DISABLED || state == CircuitBreaker.State.METRICS_ONLY;
	}

	private static int rank(CircuitBreaker.State state) {
		return switch (state) {
			case OPEN, FORCED_OPEN -> 2;
			case HALF_OPEN -> 1;
			default -> 0;
		};
	}

}
