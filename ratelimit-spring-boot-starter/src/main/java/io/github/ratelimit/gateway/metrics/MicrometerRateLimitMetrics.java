package io.github.ratelimit.gateway.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.limiter.RateLimitDecision;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts decisions in the Micrometer counter {@value #DECISIONS}, tagged {@code group}, {@code plan} and
 * {@code outcome} (see {@link RateLimitMetrics#outcome}). Tags come from the configuration only (never the client
 * key), so cardinality stays at groups × plans × 6.
 */
public class MicrometerRateLimitMetrics implements RateLimitMetrics {

	/** Name of the decision counter. */
	public static final String DECISIONS = "ratelimit.decisions";

	private final MeterRegistry registry;

	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	/**
	 * Create the metrics.
	 * @param registry where the counters are registered
	 */
	public MicrometerRateLimitMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void record(String group, RateLimitDecision decision) {
		String plan = decision.limits().plan();
		String outcome = RateLimitMetrics.outcome(decision);
		this.counters.computeIfAbsent(group + '\u0000' + plan + '\u0000' + outcome,
				(k) -> Counter.builder(DECISIONS)
					.description("Rate limit decisions")
					.tag("group", group)
					.tag("plan", plan)
					.tag("outcome", outcome)
					.register(this.registry))
			.increment();
	}

}
