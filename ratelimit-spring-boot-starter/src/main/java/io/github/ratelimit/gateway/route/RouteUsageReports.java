package io.github.ratelimit.gateway.route;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reports of every route's usage meters: settlements are counted ({@link RateLimitMetrics#recordUsageSettled}),
 * and the first settlement per route whose usage the store could not take in full (forgiven) is logged at WARN;
 * answers whose usage cannot be read are counted ({@link RateLimitMetrics#recordUsageProblem}), and the first of each
 * kind per route is logged at WARN, naming the route and what to check.
 */
final class RouteUsageReports {

	private static final Logger logger = LoggerFactory.getLogger(RouteUsageReports.class);

	private final RateLimitMetrics metrics;

	private final Map<String, UsageMeter.UsageReports> routes = new ConcurrentHashMap<>();

	private final Set<String> logged = ConcurrentHashMap.newKeySet();

	RouteUsageReports(RateLimitMetrics metrics) {
		this.metrics = metrics;
	}

	/**
	 * The reports of one route's requests of one plan.
	 * @param route the route's settings
	 * @param limits the plan's limits in the route's group
	 * @return its reports, made once per route and plan
	 */
	UsageMeter.UsageReports of(RouteLimitSettings route, PlanLimits limits) {
		return this.routes.computeIfAbsent(route.routeId() + '|' + limits.plan(), (key) -> {
			String unit = (limits.usageUnit() != null) ? limits.usageUnit() : LimitDefinition.REQUESTS;
			return new UsageMeter.UsageReports() {

				@Override
				public void admitted(long reserved) {
					if (limits.hasUsageLimits()) { // a plan without usage limits in the group charges no usage
						RouteUsageReports.this.metrics.recordUsageReserved(route.group(), unit, reserved);
					}
				}

				@Override
				public void settled(long reserved, long reported, long charged) {
					if (limits.hasUsageLimits()) {
						RouteUsageReports.this.metrics.recordUsageReserved(route.group(), unit, -reserved);
						RouteUsageReports.this.metrics.recordUsageSettled(route.routeId(), route.group(),
								limits.plan(), unit, reserved, reported, charged);
						if (reported > charged && RouteUsageReports.this.logged.add(route.routeId() + "|forgiven")) {
							logger.warn("Route '{}': an answer reported {} {} but its limits could be charged only {} "
									+ "(the store unreachable, or a debt beyond what a bucket carries); the rest is "
									+ "forgiven (logged once per route; counted in ratelimit.usage.forgiven)",
									route.routeId(), reported, unit, charged);
						}
					}
				}

				@Override
				public void problem(UsageReading.Kind kind) {
					report(route, kind);
				}

			};
		});
	}

	private void report(RouteLimitSettings route, UsageReading.Kind kind) {
		String problem = name(kind);
		this.metrics.recordUsageProblem(route.routeId(), route.group(), problem);
		if (this.logged.add(route.routeId() + '|' + problem)) {
			if (kind == UsageReading.Kind.TOO_LARGE) {
				logger.warn("Route '{}': an answer reported more usage ({}) than {} units; it was charged {} (logged "
						+ "once per route; counted in ratelimit.usage.problems)", route.routeId(),
						route.usage().usage(), route.usage().usageMax(), route.usage().usageMax());
			}
			else {
				logger.warn("Route '{}': an answer's usage could not be read from {} ({}); it was charged its "
						+ "reservation (logged once per route and kind; counted in ratelimit.usage.problems)",
						route.routeId(), route.usage().usage(), problem);
			}
		}
	}

	/**
	 * The meter tag of a reading's kind.
	 * @param kind what was wrong
	 * @return e.g. {@code not-json}
	 */
	static String name(UsageReading.Kind kind) {
		return kind.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
