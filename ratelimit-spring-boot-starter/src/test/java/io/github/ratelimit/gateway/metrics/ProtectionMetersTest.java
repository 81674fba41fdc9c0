package io.github.ratelimit.gateway.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.PriorityShares;
import io.github.ratelimit.gateway.protection.UpstreamPermit;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upstream protections' meters of {@link MicrometerRateLimitMetrics}: the shed counter, and the gauges and
 * latency timers {@link MicrometerRateLimitMetrics#bindProtections} registers, over real protections and a real
 * {@link SimpleMeterRegistry}.
 */
class ProtectionMetersTest {

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final UpstreamProtection orders = UpstreamProtection.fixed("orders", 4, PriorityShares.DEFAULT, false, 1);

	private final UpstreamProtection search = UpstreamProtection.adaptive("search", AdaptiveAlgorithm.VEGAS, 2, 50,
			10, PriorityShares.DEFAULT, false, 1);

	@Test
	void shedRequestsAreCountedByRouteGroupProtectionPriorityAndShadow() {
		MicrometerRateLimitMetrics metrics = new MicrometerRateLimitMetrics(this.registry);
		metrics.recordShed("orders", "orders", "orders-backend", Priority.LOW, false);
		metrics.recordShed("orders", "orders", "orders-backend", Priority.LOW, false);
		metrics.recordShed("orders", "orders", "orders-backend", Priority.LOW, true);
		metrics.recordShed("orders", "orders", "orders-backend", Priority.CRITICAL, false);
		metrics.recordShed("export", "orders", "orders-backend", Priority.LOW, false);

		assertThat(shed("orders", "low", "false")).isEqualTo(2);
		assertThat(shed("orders", "low", "true")).isEqualTo(1);
		assertThat(shed("orders", "critical", "false")).isEqualTo(1);
		assertThat(shed("export", "low", "false")).isEqualTo(1);
		assertThat(this.registry.find(MicrometerRateLimitMetrics.SHED).counters()).as("only the series that moved")
			.hasSize(4);
		Counter one = this.registry.find(MicrometerRateLimitMetrics.SHED).tag("route", "export").counter();
		assertThat(one.getId().getTags()).extracting((t) -> t.getKey() + "=" + t.getValue())
			.containsExactlyInAnyOrder("route=export", "group=orders", "protection=orders-backend", "priority=low",
					"shadow=false");
	}

	@Test
	void eachProtectionHasALimitGaugeAnInFlightGaugePerPriorityAndTwoLatencyTimers() {
		MicrometerRateLimitMetrics.bindProtections(protections(), this.registry);

		assertThat(this.registry.getMeters()).extracting(ProtectionMetersTest::describe).containsExactlyInAnyOrder(
				"ratelimit.protection.limit[protection=orders]", "ratelimit.protection.limit[protection=search]",
				"ratelimit.protection.in.flight[priority=critical, protection=orders]",
				"ratelimit.protection.in.flight[priority=high, protection=orders]",
				"ratelimit.protection.in.flight[priority=normal, protection=orders]",
				"ratelimit.protection.in.flight[priority=low, protection=orders]",
				"ratelimit.protection.in.flight[priority=critical, protection=search]",
				"ratelimit.protection.in.flight[priority=high, protection=search]",
				"ratelimit.protection.in.flight[priority=normal, protection=search]",
				"ratelimit.protection.in.flight[priority=low, protection=search]",
				"ratelimit.protection.latency[outcome=answered, protection=orders]",
				"ratelimit.protection.latency[outcome=dropped, protection=orders]",
				"ratelimit.protection.latency[outcome=answered, protection=search]",
				"ratelimit.protection.latency[outcome=dropped, protection=search]");
		assertThat(limit("orders")).isEqualTo(4);
		assertThat(limit("search")).as("the initial limit, before any sample").isEqualTo(10);
	}

	@Test
	void theInFlightGaugesFollowThePermits() {
		MicrometerRateLimitMetrics.bindProtections(protections(), this.registry);
		UpstreamPermit low = this.orders.tryAcquire(Priority.LOW);
		UpstreamPermit critical = this.orders.tryAcquire(Priority.CRITICAL);
		UpstreamPermit shadow = this.orders.acquire(Priority.LOW);
		assertThat(low).isNotNull();
		assertThat(critical).isNotNull();

		assertThat(inFlight("orders", "low")).isEqualTo(2);
		assertThat(inFlight("orders", "critical")).isEqualTo(1);
		assertThat(inFlight("orders", "high")).isZero();
		assertThat(inFlight("search", "low")).isZero();

		low.release();
		low.release();
		shadow.release();
		critical.release();
		assertThat(inFlight("orders", "low")).isZero();
		assertThat(inFlight("orders", "critical")).isZero();
	}

	@Test
	void theLatencyTimersAreFedByEverySampleAsAnsweredOrDropped() {
		MicrometerRateLimitMetrics.bindProtections(protections(), this.registry);
		sample(this.orders, Priority.LOW, (permit) -> permit.answered(200));
		sample(this.orders, Priority.CRITICAL, (permit) -> permit.answered(404));
		sample(this.orders, Priority.LOW, (permit) -> permit.answered(503));
		sample(this.orders, Priority.HIGH, UpstreamPermit::failed);
		sample(this.search, Priority.NORMAL, (permit) -> permit.answered(200));
		// released unanswered (the client went away, the rate limits refused it): no sample
		UpstreamPermit abandoned = this.orders.tryAcquire(Priority.LOW);
		abandoned.forwarded();
		abandoned.release();
		abandoned.answered(200);

		assertThat(latency("orders", "answered").count()).isEqualTo(2);
		assertThat(latency("orders", "dropped").count()).isEqualTo(2);
		assertThat(latency("search", "answered").count()).isEqualTo(1);
		assertThat(latency("search", "dropped").count()).isZero();
		assertThat(latency("orders", "answered").totalTime(TimeUnit.NANOSECONDS)).isPositive();
	}

	@Test
	void aRegistryWithoutProtectionsGetsNoProtectionMeters() {
		MicrometerRateLimitMetrics.bindProtections(UpstreamProtections.NONE, this.registry);
		assertThat(this.registry.getMeters()).isEmpty();
	}

	private UpstreamProtections protections() {
		Map<String, UpstreamProtection> all = new LinkedHashMap<>();
		all.put("orders", this.orders);
		all.put("search", this.search);
		return new UpstreamProtections(all, (plan) -> Priority.NORMAL);
	}

	private static void sample(UpstreamProtection protection, Priority priority,
			java.util.function.Consumer<UpstreamPermit> answer) {
		UpstreamPermit permit = protection.tryAcquire(priority);
		assertThat(permit).isNotNull();
		permit.forwarded();
		answer.accept(permit);
		permit.release();
	}

	private static String describe(Meter meter) {
		return meter.getId().getName() + meter.getId().getTags().stream()
			.map((t) -> t.getKey() + "=" + t.getValue())
			.toList();
	}

	private double shed(String route, String priority, String shadow) {
		return this.registry.get(MicrometerRateLimitMetrics.SHED).tags("route", route, "priority", priority, "shadow",
				shadow).counter().count();
	}

	private double limit(String protection) {
		Gauge gauge = this.registry.get(MicrometerRateLimitMetrics.PROTECTION_LIMIT).tag("protection", protection)
			.gauge();
		return gauge.value();
	}

	private double inFlight(String protection, String priority) {
		return this.registry.get(MicrometerRateLimitMetrics.PROTECTION_IN_FLIGHT)
			.tags("protection", protection, "priority", priority).gauge().value();
	}

	private Timer latency(String protection, String outcome) {
		return this.registry.get(MicrometerRateLimitMetrics.PROTECTION_LATENCY)
			.tags("protection", protection, "outcome", outcome).timer();
	}

}
