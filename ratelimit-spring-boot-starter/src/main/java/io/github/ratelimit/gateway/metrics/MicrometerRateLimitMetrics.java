package io.github.ratelimit.gateway.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Publishes the limiter's Micrometer meters. Every tag value comes from the configuration or a fixed set, never from
 * the client, so the number of series stays at routes × plans × outcomes whatever the number of clients.
 *
 * <ul>
 * <li>{@value #DECISIONS} (counter; tags {@code route}, {@code group}, {@code plan}, {@code outcome}): decisions,
 * outcome one of {@code allowed}, {@code denied}, {@code fallback-allowed}, {@code fallback-denied},
 * {@code unchecked}, {@code failed-closed}, {@code shadow-denied}.</li>
 * <li>{@value #CHECKS} (timer with percentile histogram; tag {@code source}: {@code redis},
 * {@code lease}, {@code over-limit-cache}, {@code local-fallback}, {@code none}): time from asking the limiter to having a
 * decision, including a failed
 * Redis attempt before a fallback.</li>
 * <li>{@value #REDIS_ERRORS} (counter; tag {@code kind}: {@code timeout}, {@code circuit-open}, {@code connection},
 * {@code script}, {@code other}): failed calls to Redis.</li>
 * <li>{@value #DENIALS} (counter; tags {@code route}, {@code group}, {@code kind}: {@code rate} or
 * {@code concurrency}): decided denials (by Redis, the over-limit cache or the local fallback, shadow ones included)
 * by the kind of limit they violated; a denial that violated both kinds counts once in each.</li>
 * <li>{@value #USAGE_RESERVED} and {@value #USAGE_CHARGED} (counters; tags {@code route}, {@code group},
 * {@code plan}, {@code unit}): on routes with {@code usage}, the units requests reserved when admitted and the units
 * they were charged once their answers were over (0 for an answer that did not count); settled requests only.</li>
 * <li>{@value #USAGE_IN_FLIGHT} (gauge; tags {@code group}, {@code unit}): units of usage reserved by requests this
 * instance admitted whose answers are not over yet (every instance publishes its own).</li>
 * <li>{@value #USAGE_PROBLEMS} (counter; tags {@code route}, {@code group}, {@code problem}: {@code missing},
 * {@code not-json}, {@code not-a-number}, {@code negative}, {@code too-large}, {@code encoded}): answers whose usage could not be read
 * (charged their reservation) or was above the capacity of the limits counting usage (charged that).</li>
 * <li>{@value #QUOTA_CROSSINGS} (counter; tags {@code group}, {@code plan}, {@code policy} (the quota's policy
 * name), {@code threshold}: {@code 80} or {@code 100}): requests admitted by Redis that moved a quota's used count
 * from below that percentage of its limit to at or above it ({@link RateLimitMetrics#crossesQuotaThreshold}): once per
 * client, quota and threshold in a period across every instance (a global quota's once for all clients together),
 * again only if the quota's count went back below the threshold (a top-up or reset, usage given back).</li>
 * <li>{@value #IN_FLIGHT} (gauge; tag {@code group}): requests of groups with concurrency limits that this instance
 * admitted and that still hold their slots (every instance publishes its own; their sum is the group's total).</li>
 * <li>{@value #SHED} (counter; tags {@code route}, {@code group}, {@code protection}, {@code priority}:
 * {@code critical}, {@code high}, {@code normal}, {@code low}, {@code shadow}: {@code true} or {@code false}):
 * requests an upstream protection shed, or in shadow mode would have shed (then forwarded all the same).</li>
 * <li>{@value #PROTECTION_LIMIT} (gauge; tag {@code protection}): an upstream protection's limit now, requests in
 * flight to the upstream from this instance.</li>
 * <li>{@value #PROTECTION_IN_FLIGHT} (gauge; tags {@code protection}, {@code priority}, one per priority): requests
 * of a priority in flight through the protection now (above the limit in all while borrowed places were outranked,
 * and in shadow mode).</li>
 * <li>{@value #PROTECTION_LATENCY} (timer with percentile histogram; tags {@code protection}, {@code outcome}:
 * {@code answered} or {@code dropped}): the latency samples the protection's limit takes, from forwarding to the
 * answer's header fields; {@code dropped} for a failure or a status of 500 or more.</li>
 * </ul>
 * The protections' gauges and timers are registered once, at start-up, by {@link #bindProtections}.
 * The circuit breaker's own meters ({@code resilience4j.circuitbreaker.*}, tag {@code name=ratelimit-redis}) come from
 * Resilience4j's Micrometer binding; {@value #TRANSITIONS} (counter; tags {@code from}, {@code to}: {@code closed},
 * {@code open}, {@code half_open}, ...) counts its state transitions.
 */
public class MicrometerRateLimitMetrics implements RateLimitMetrics {

	/** Name of the decision counter. */
	public static final String DECISIONS = "ratelimit.decisions";

	/** Name of the check duration timer. */
	public static final String CHECKS = "ratelimit.check.duration";

	/** Name of the Redis error counter. */
	public static final String REDIS_ERRORS = "ratelimit.redis.errors";

	/** Name of the denial counter, by kind of limit violated. */
	public static final String DENIALS = "ratelimit.denials";

	/** Name of the counter of usage units reserved by admitted requests. */
	public static final String USAGE_RESERVED = "ratelimit.usage.reserved";

	/** Name of the counter of usage units the store charged once answers were over. */
	public static final String USAGE_CHARGED = "ratelimit.usage.charged";

	/** Name of the counter of usage units answers reported. */
	public static final String USAGE_REPORTED = "ratelimit.usage.reported";

	/** Name of the counter of usage units reported but not charged. */
	public static final String USAGE_FORGIVEN = "ratelimit.usage.forgiven";

	/** Name of the gauge of usage units reserved by requests whose answers are not over. */
	public static final String USAGE_IN_FLIGHT = "ratelimit.usage.reserved.in.flight";

	/** Name of the counter of answers whose usage could not be read. */
	public static final String USAGE_PROBLEMS = "ratelimit.usage.problems";

	/** Name of the counter of crossings of 80% and 100% of a quota. */
	public static final String QUOTA_CROSSINGS = "ratelimit.quota.crossings";

	/** The percentages of a quota's limit whose crossings are counted, in the order of the counters' arrays. */
	private static final int[] QUOTA_THRESHOLDS = { 80, 100 };

	/** Name of the gauge of requests in flight holding concurrency slots. */
	public static final String IN_FLIGHT = "ratelimit.requests.in.flight";

	/** Name of the counter of requests shed by upstream protections. */
	public static final String SHED = "ratelimit.requests.shed";

	/** Name of the gauge of an upstream protection's limit. */
	public static final String PROTECTION_LIMIT = "ratelimit.protection.limit";

	/** Name of the gauge of requests in flight through an upstream protection, by priority. */
	public static final String PROTECTION_IN_FLIGHT = "ratelimit.protection.in.flight";

	/** Name of the timer of an upstream protection's latency samples. */
	public static final String PROTECTION_LATENCY = "ratelimit.protection.latency";

	/** Name of the circuit breaker transition counter. */
	public static final String TRANSITIONS = "ratelimit.circuitbreaker.transitions";

	private final MeterRegistry registry;

	/** Decision counters by route, then group, then plan, then outcome: no key built per request. */
	private final Map<String, Map<String, Map<String, Map<String, Counter>>>> decisions = new ConcurrentHashMap<>();

	private final Map<RateLimitDecision.Source, Timer> checks = new ConcurrentHashMap<>();

	private final Map<String, Counter> errors = new ConcurrentHashMap<>();

	/** Denial counters by route, then group, each [rate, concurrency]. */
	private final Map<String, Map<String, Counter[]>> denials = new ConcurrentHashMap<>();

	/** Quota crossing counters by group, then plan, then policy, each by {@link #QUOTA_THRESHOLDS}. */
	private final Map<String, Map<String, Map<String, Counter[]>>> quotaCrossings = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> inFlight = new ConcurrentHashMap<>();

	/**
	 * Shed counters by route, then group, then protection, each by priority and shadow
	 * ({@code 2 * priority.ordinal() + (shadow ? 1 : 0)}), registered on first use.
	 */
	private final Map<String, Map<String, Map<String, AtomicReferenceArray<Counter>>>> shed = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> usageInFlight = new ConcurrentHashMap<>();

	/**
	 * Create the metrics.
	 * @param registry where the meters are registered
	 */
	public MicrometerRateLimitMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void recordDecision(String route, String group, RateLimitDecision decision, boolean shadow) {
		String plan = decision.limits().plan();
		String outcome = RateLimitMetrics.outcome(decision, shadow);
		Counter counter = null;
		Map<String, Map<String, Map<String, Counter>>> byGroup = this.decisions.get(route);
		Map<String, Map<String, Counter>> byPlan = (byGroup != null) ? byGroup.get(group) : null;
		Map<String, Counter> byOutcome = (byPlan != null) ? byPlan.get(plan) : null;
		if (byOutcome != null) {
			counter = byOutcome.get(outcome);
		}
		if (counter == null) {
			counter = this.decisions.computeIfAbsent(route, (r) -> new ConcurrentHashMap<>())
				.computeIfAbsent(group, (g) -> new ConcurrentHashMap<>())
				.computeIfAbsent(plan, (p) -> new ConcurrentHashMap<>())
				.computeIfAbsent(outcome, (o) -> Counter.builder(DECISIONS)
					.description("Rate limit decisions")
					.tag("route", route)
					.tag("group", group)
					.tag("plan", plan)
					.tag("outcome", outcome)
					.register(this.registry));
		}
		counter.increment();
		if (!decision.allowed() && decision.isDecided()) {
			recordDenial(route, group, decision);
		}
	}

	private void recordDenial(String route, String group, RateLimitDecision decision) {
		boolean[] kinds = RateLimitMetrics.violatedKinds(decision);
		Map<String, Counter[]> byGroup = this.denials.get(route);
		Counter[] counters = (byGroup != null) ? byGroup.get(group) : null;
		if (counters == null) {
			counters = this.denials.computeIfAbsent(route, (r) -> new ConcurrentHashMap<>())
				.computeIfAbsent(group, (g) -> new Counter[] { denialCounter(route, group, "rate"),
						denialCounter(route, group, "concurrency") });
		}
		for (int i = 0; i < kinds.length; i++) {
			if (kinds[i]) {
				counters[i].increment();
			}
		}
	}

	private Counter denialCounter(String route, String group, String kind) {
		return Counter.builder(DENIALS)
			.description("Rate limit denials by the kind of limit violated")
			.tag("route", route)
			.tag("group", group)
			.tag("kind", kind)
			.register(this.registry);
	}

	@Override
	public void recordQuotaCrossings(String group, RateLimitDecision decision, Cost cost) {
		if (!decision.allowed() || decision.source() != RateLimitDecision.Source.SHARED
				|| !decision.limits().hasQuotas()) {
			return;
		}
		for (LimitStatus status : decision.statuses()) {
			LimitDefinition limit = status.limit();
			if (!limit.isQuota()) {
				continue;
			}
			Counter[] counters = null;
			for (int i = 0; i < QUOTA_THRESHOLDS.length; i++) {
				if (RateLimitMetrics.crossesQuotaThreshold(limit.capacity(), status.remaining(), cost.of(limit),
						QUOTA_THRESHOLDS[i])) {
					if (counters == null) {
						counters = quotaCrossingCounters(group, decision.limits().plan(), limit.policyName());
					}
					counters[i].increment();
				}
			}
		}
	}

	private Counter[] quotaCrossingCounters(String group, String plan, String policy) {
		return this.quotaCrossings.computeIfAbsent(group, (g) -> new ConcurrentHashMap<>())
			.computeIfAbsent(plan, (p) -> new ConcurrentHashMap<>())
			.computeIfAbsent(policy, (q) -> {
				Counter[] counters = new Counter[QUOTA_THRESHOLDS.length];
				for (int i = 0; i < counters.length; i++) {
					counters[i] = Counter.builder(QUOTA_CROSSINGS)
						.description("Requests that moved a quota's use to or past a percentage of its limit")
						.tags("group", group, "plan", plan, "policy", policy, "threshold",
								Integer.toString(QUOTA_THRESHOLDS[i]))
						.register(this.registry);
				}
				return counters;
			});
	}

	@Override
	public void recordUsageSettled(String route, String group, String plan, String unit, long reserved,
			long reported, long charged) {
		usageCounter(USAGE_RESERVED, "Usage units reserved by admitted requests", route, group, plan, unit)
			.increment(reserved);
		usageCounter(USAGE_REPORTED, "Usage units answers reported (their reservation when they reported none)",
				route, group, plan, unit)
			.increment(reported);
		usageCounter(USAGE_CHARGED, "Usage units the store charged once answers were over", route, group, plan, unit)
			.increment(charged);
		usageCounter(USAGE_FORGIVEN, "Usage units answers reported that the store could not charge", route, group,
				plan, unit)
			.increment(Math.max(0, reported - charged));
	}

	private Counter usageCounter(String name, String description, String route, String group, String plan,
			String unit) {
		return Counter.builder(name)
			.description(description)
			.tags("route", route, "group", group, "plan", plan, "unit", unit)
			.register(this.registry);
	}

	@Override
	public void recordUsageReserved(String group, String unit, long units) {
		AtomicLong reserved = this.usageInFlight.get(group);
		if (reserved == null) {
			reserved = this.usageInFlight.computeIfAbsent(group, (g) -> {
				AtomicLong held = new AtomicLong();
				Gauge.builder(USAGE_IN_FLIGHT, held, AtomicLong::get)
					.description("Usage units reserved by requests whose answers are not over")
					.tags("group", g, "unit", unit)
					.register(this.registry);
				return held;
			});
		}
		reserved.addAndGet(units);
	}

	@Override
	public void recordUsageProblem(String route, String group, String problem) {
		Counter.builder(USAGE_PROBLEMS)
			.description("Answers whose usage could not be read, or was above the usage capacity")
			.tags("route", route, "group", group, "problem", problem)
			.register(this.registry)
			.increment();
	}

	@Override
	public Runnable recordInFlight(String group) {
		AtomicLong count = this.inFlight.get(group);
		if (count == null) {
			count = this.inFlight.computeIfAbsent(group, (g) -> {
				AtomicLong held = new AtomicLong();
				Gauge.builder(IN_FLIGHT, held, AtomicLong::get)
					.description("Requests admitted by this instance that hold concurrency slots")
					.tag("group", g)
					.register(this.registry);
				return held;
			});
		}
		AtomicLong held = count;
		held.incrementAndGet();
		return held::decrementAndGet;
	}

	@Override
	public void recordShed(String route, String group, String protection, Priority priority, boolean shadow) {
		Map<String, Map<String, AtomicReferenceArray<Counter>>> byGroup = this.shed.get(route);
		Map<String, AtomicReferenceArray<Counter>> byProtection = (byGroup != null) ? byGroup.get(group) : null;
		AtomicReferenceArray<Counter> counters = (byProtection != null) ? byProtection.get(protection) : null;
		if (counters == null) {
			counters = this.shed.computeIfAbsent(route, (r) -> new ConcurrentHashMap<>())
				.computeIfAbsent(group, (g) -> new ConcurrentHashMap<>())
				.computeIfAbsent(protection, (p) -> new AtomicReferenceArray<>(2 * Priority.values().length));
		}
		int index = 2 * priority.ordinal() + (shadow ? 1 : 0);
		Counter counter = counters.get(index);
		if (counter == null) {
			// a race registers the same counter twice: the registry answers the one it has
			counter = Counter.builder(SHED)
				.description("Requests shed by upstream protections (in shadow mode: that would have been)")
				.tags("route", route, "group", group, "protection", protection, "priority", priority.tag(), "shadow",
						Boolean.toString(shadow))
				.register(this.registry);
			counters.set(index, counter);
		}
		counter.increment();
	}

	/**
	 * Register the meters of upstream protections in a registry: for each protection the gauges
	 * {@value #PROTECTION_LIMIT} and {@value #PROTECTION_IN_FLIGHT} (one per priority), and the timers
	 * {@value #PROTECTION_LATENCY} ({@code answered}, {@code dropped}), which a sample listener of the protection
	 * feeds from then on. Call it once per registry: each call adds a listener to every protection.
	 * @param protections the protections of this instance (their set does not change while it runs)
	 * @param registry where the meters are registered
	 */
	public static void bindProtections(UpstreamProtections protections, MeterRegistry registry) {
		for (UpstreamProtection protection : protections.all()) {
			String name = protection.name();
			Gauge.builder(PROTECTION_LIMIT, protection, UpstreamProtection::limit)
				.description("The limit of an upstream protection now: requests in flight this instance lets through")
				.tag("protection", name)
				.strongReference(true)
				.register(registry);
			for (Priority priority : Priority.values()) {
				Gauge.builder(PROTECTION_IN_FLIGHT, protection, (p) -> p.inFlight(priority))
					.description("Requests of a priority in flight through an upstream protection now")
					.tags("protection", name, "priority", priority.tag())
					.strongReference(true)
					.register(registry);
			}
			Timer answered = latencyTimer(registry, name, "answered");
			Timer dropped = latencyTimer(registry, name, "dropped");
			protection.addSampleListener((sampled, priority, latencyNanos, drop) -> (drop ? dropped : answered)
				.record(latencyNanos, TimeUnit.NANOSECONDS));
		}
	}

	private static Timer latencyTimer(MeterRegistry registry, String protection, String outcome) {
		return Timer.builder(PROTECTION_LATENCY)
			.description("Latency samples of an upstream protection's limit: forwarding to the answer's header fields")
			.tags("protection", protection, "outcome", outcome)
			.publishPercentileHistogram()
			.minimumExpectedValue(Duration.ofMillis(1))
			.maximumExpectedValue(Duration.ofSeconds(60))
			.register(registry);
	}

	@Override
	public void recordCheck(RateLimitDecision.Source source, long nanos) {
		Timer timer = this.checks.get(source);
		if (timer == null) {
			timer = this.checks.computeIfAbsent(source, (s) -> Timer.builder(CHECKS)
			.description("Time to decide one rate limit check")
			.tag("source", RateLimitMetrics.source(s))
			.publishPercentileHistogram()
			.minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(1))
			.register(this.registry));
		}
		timer.record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void recordRedisError(Throwable error) {
		String kind = RateLimitMetrics.errorKind(error);
		this.errors.computeIfAbsent(kind, (k) -> Counter.builder(REDIS_ERRORS)
			.description("Failed rate limit calls to Redis")
			.tag("kind", k)
			.register(this.registry)).increment();
	}

}
