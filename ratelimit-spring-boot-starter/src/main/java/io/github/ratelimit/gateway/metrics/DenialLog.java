package io.github.ratelimit.gateway.metrics;

import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Scheduler;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.properties.RateLimitProperties.DenialLogLevel;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The denial log (logger {@value #LOGGER_NAME}): refused requests, in a volume an attacker cannot inflate.
 *
 * <p><b>Full line.</b> The first denial of a client in an endpoint group per interval
 * ({@code ratelimit.denial-log-interval}) is written in full, with key-value pairs that Spring Boot's structured
 * logging renders as fields: {@code client} (hashed: the hash of an API key, a principal's name or a header's value,
 * as in Redis key names, or the SHA-256 prefix of the IP address, never the raw value; but for an API key's, a
 * pseudonym), {@code route},
 * {@code group}, {@code plan}, {@code policies} (the violated ones), {@code outcome} ({@code denied},
 * {@code fallback-denied}, {@code failed-closed} or {@code shadow-denied}), {@code retryAfterMs}. The first denial
 * of each outcome is written in full: a client denied by Redis and then refused because the limiter failed closed
 * gets both lines.
 *
 * <p><b>Summary line.</b> Further denials of that client in that group are only counted. When its interval ends
 * (the interval starts at the client's first full line), one line at the same level says how many:
 * {@code Rate limit denials: 4,210 more for client=k:... route=search group=search in the last 60 s}, with the
 * key-value pairs {@code client}, {@code route} (of the interval's first denial; a group may have several routes),
 * {@code group}, {@code suppressed} (the count) and {@code intervalSeconds}. The summary adds up every outcome of the
 * client in the group. No denials after the first, no summary. A summary is written by a timer (Caffeine's
 * {@link Scheduler}) even without further traffic, but may come up to about a second after its interval ends.
 * Summaries still pending when the application stops are not written. The full rate stays visible in the
 * {@code ratelimit.decisions} meter, which counts every decision.
 *
 * <p><b>Bounds.</b> At most {@value #MAX_CLIENTS} clients are tracked (a Caffeine cache, entries expiring one
 * interval after they were made). A client dropped for size gets its summary right away and, if denied again, a new
 * full line. In all, the denial log writes at most {@value #MAX_LINES} client lines (full and summary) per
 * interval, the line budget. Once it is spent, the denials that would have been written are counted, and when the budget's
 * interval ends (it starts with its first line) one line says how many:
 * {@code Rate limit denials: 812,345 more for other clients in the last 60 s (at most 1,000 lines per interval)},
 * key-value pairs {@code suppressed}, {@code intervalSeconds}, {@code maxLines}. A tracked client's further denials
 * are still counted for its own summary, which again needs a line of the budget. Every denial is thus written in
 * full or counted in exactly one summary, and any stretch of one interval holds at most about two budgets' worth
 * of lines (the budget's intervals are not aligned with the clients'), whatever the traffic.
 */
public final class DenialLog {

	/** Name of the logger of the denial lines and their summaries. */
	static final String LOGGER_NAME = "io.github.ratelimit.gateway.denials";

	/** Most clients (client and endpoint group) whose denials are counted at a time. */
	static final int MAX_CLIENTS = 10_000;

	/** Most client lines (full and summary) per interval, the line budget. */
	static final int MAX_LINES = 1_000;

	private static final Logger logger = LoggerFactory.getLogger(LOGGER_NAME);

	private final @Nullable Level level;

	private final Number intervalSeconds;

	private final long maxLines;

	private final Cache<ClientGroup, Denials> clients;

	private final Cache<Boolean, LineBudget> budget;

	/**
	 * Create the denial log of the gateway: {@value #MAX_CLIENTS} clients, {@value #MAX_LINES} lines per interval,
	 * the system clock, summaries written on Caffeine's system scheduler and the common pool.
	 * @param level level of every line, {@code OFF} for none
	 * @param interval how long one full line per client and group stands for all its denials; positive
	 */
	public DenialLog(DenialLogLevel level, Duration interval) {
		this(level, interval, MAX_CLIENTS, MAX_LINES, Ticker.systemTicker(), Scheduler.systemScheduler(),
				ForkJoinPool.commonPool());
	}

	/**
	 * Create a denial log with its own bounds, clock and timer (tests).
	 * @param level level of every line, {@code OFF} for none
	 * @param interval how long one full line per client and group stands for all its denials; positive
	 * @param maxClients most clients tracked at a time, at least 1
	 * @param maxLines most client lines per interval, at least 1
	 * @param ticker the clock of the intervals
	 * @param scheduler ends intervals without traffic
	 * @param executor writes the summaries
	 */
	DenialLog(DenialLogLevel level, Duration interval, long maxClients, long maxLines, Ticker ticker,
			Scheduler scheduler, Executor executor) {
		this.level = switch (level) {
			case OFF -> null;
			case ERROR -> Level.ERROR;
			case WARN -> Level.WARN;
			case INFO -> Level.INFO;
			case DEBUG -> Level.DEBUG;
			case TRACE -> Level.TRACE;
		};
		long nanos = interval.toNanos();
		this.intervalSeconds = (nanos % 1_000_000_000L == 0) ? (Number) (nanos / 1_000_000_000L)
				: (Number) (nanos / 1e9);
		this.maxLines = maxLines;
		this.clients = Caffeine.newBuilder()
			.maximumSize(maxClients)
			.expireAfterWrite(interval)
			.ticker(ticker)
			.scheduler(scheduler)
			.executor(executor)
			.<ClientGroup, Denials>removalListener((key, denials, cause) -> {
				if (denials != null) {
					ended(denials);
				}
			})
			.build();
		this.budget = Caffeine.newBuilder()
			.expireAfterWrite(interval)
			.ticker(ticker)
			.scheduler(scheduler)
			.executor(executor)
			.<Boolean, LineBudget>removalListener((key, lines, cause) -> {
				if (lines != null) {
					ended(lines);
				}
			})
			.build();
	}

	/**
	 * Record a refused request: a full line if it is the client's first in the group (for its outcome) in the
	 * interval and the line budget allows, else counted for a summary.
	 * @param client who was refused
	 * @param route the route id
	 * @param group the endpoint group
	 * @param decision the refusing decision
	 * @param shadow whether the route only observes (the outcome is then {@code shadow-denied})
	 * @param retryAfterMillis how long the client was told to wait ({@code Retry-After}), in milliseconds, at least 0
	 */
	public void denied(ClientKey client, String route, String group, RateLimitDecision decision, boolean shadow,
			long retryAfterMillis) {
		if (this.level == null || !logger.isEnabledForLevel(this.level)) {
			return;
		}
		String outcome = RateLimitMetrics.outcome(decision, shadow);
		refused(client, route, group, outcome,
				(id) -> logInFull(id, route, group, decision, outcome, retryAfterMillis));
	}

	/**
	 * Record a request shed by an upstream protection (outcome {@code shed}, or {@code shadow-shed} when it was
	 * forwarded all the same), like a denial: a full line with the key-value pairs {@code client}, {@code route},
	 * {@code group}, {@code plan}, {@code priority}, {@code protection}, {@code outcome}, {@code retryAfterMs}, or
	 * counted for the client's summary.
	 * @param client who was shed
	 * @param route the route id
	 * @param group the endpoint group
	 * @param priority the request's priority
	 * @param protection the protection's name
	 * @param shadow whether the request was forwarded all the same
	 * @param retryAfterMillis how long the client was told to wait, in milliseconds (0 in shadow mode)
	 */
	public void shed(ClientKey client, String route, String group, Priority priority, String protection,
			boolean shadow, long retryAfterMillis) {
		Level level = this.level;
		if (level == null || !logger.isEnabledForLevel(level)) {
			return;
		}
		String outcome = shadow ? "shadow-shed" : "shed";
		refused(client, route, group, outcome, (id) -> logger.atLevel(level)
			.addKeyValue("client", id)
			.addKeyValue("route", route)
			.addKeyValue("group", group)
			.addKeyValue("plan", client.plan())
			.addKeyValue("priority", priority.tag())
			.addKeyValue("protection", protection)
			.addKeyValue("outcome", outcome)
			.addKeyValue("retryAfterMs", retryAfterMillis)
			.log("Rate limit {}: client={} route={} group={} plan={} priority={} protection={} retryAfterMs={}",
					outcome, id, route, group, client.plan(), priority.tag(), protection, retryAfterMillis));
	}

	/** A refusal of a client in a group: its full line when first in the interval, else counted. */
	private void refused(ClientKey client, String route, String group, String outcome, Consumer<String> fullLine) {
		String id = client.kind().tag() + ":"
				+ (client.kind().isHashed() ? client.id() : ApiKeyHasher.hash(client.id()));
		ClientGroup key = new ClientGroup(id, group);
		while (true) {
			Denials denials = this.clients.get(key, (k) -> new Denials(id, route, group));
			switch (denials.record(outcome)) {
				case FIRST -> {
					if (takeLine()) {
						fullLine.accept(id);
					}
					else {
						suppressForOthers(1);
					}
					return;
				}
				case COUNTED -> {
					return;
				}
				case ENDED -> {
					// its interval ended between the lookup and the record: the next lookup starts a new one
				}
			}
		}
	}

	/** Clients tracked now (tests). */
	long trackedClients() {
		this.clients.cleanUp();
		return this.clients.estimatedSize();
	}

	private void logInFull(String id, String route, String group, RateLimitDecision decision, String outcome,
			long retryAfterMillis) {
		String policies = decision.violated().stream().map((s) -> s.limit().policyName()).collect(Collectors.joining(","));
		LoggingEventBuilder event = logger.atLevel(this.level)
			.addKeyValue("client", id)
			.addKeyValue("route", route)
			.addKeyValue("group", group)
			.addKeyValue("plan", decision.limits().plan())
			.addKeyValue("policies", policies)
			.addKeyValue("outcome", outcome)
			.addKeyValue("retryAfterMs", retryAfterMillis);
		event.log("Rate limit {}: client={} route={} group={} plan={} policies=[{}] retryAfterMs={}", outcome, id, route,
				group, decision.limits().plan(), policies, retryAfterMillis);
	}

	/** A client's interval ended (expired, or dropped for size): its summary, if it had denials not written. */
	private void ended(Denials denials) {
		long suppressed = denials.end();
		if (suppressed == 0) {
			return;
		}
		if (!takeLine()) {
			suppressForOthers(suppressed);
			return;
		}
		logger.atLevel(this.level)
			.addKeyValue("client", denials.client)
			.addKeyValue("route", denials.route)
			.addKeyValue("group", denials.group)
			.addKeyValue("suppressed", suppressed)
			.addKeyValue("intervalSeconds", this.intervalSeconds)
			.log("Rate limit denials: {} more for client={} route={} group={} in the last {} s", format(suppressed),
					denials.client, denials.route, denials.group, this.intervalSeconds);
	}

	/** The line budget's interval ended: one line for the denials it left out, if any. */
	private void ended(LineBudget lines) {
		long suppressed = lines.end();
		if (suppressed == 0) {
			return;
		}
		logger.atLevel(this.level)
			.addKeyValue("suppressed", suppressed)
			.addKeyValue("intervalSeconds", this.intervalSeconds)
			.addKeyValue("maxLines", this.maxLines)
			.log("Rate limit denials: {} more for other clients in the last {} s (at most {} lines per interval)",
					format(suppressed), this.intervalSeconds, format(this.maxLines));
	}

	private boolean takeLine() {
		while (true) {
			Boolean taken = this.budget.get(Boolean.TRUE, (k) -> new LineBudget()).take(this.maxLines);
			if (taken != null) {
				return taken;
			}
		}
	}

	private void suppressForOthers(long denials) {
		while (!this.budget.get(Boolean.TRUE, (k) -> new LineBudget()).suppress(denials)) {
			// that budget's interval just ended: the next lookup starts a new one
		}
	}

	private static String format(long count) {
		return String.format(Locale.ROOT, "%,d", count);
	}

	/** Who was denied: a client (hashed id) in an endpoint group. */
	private record ClientGroup(String client, String group) {
	}

	/** What {@link Denials#record} did with a denial. */
	private enum Recorded {

		/** The first of its outcome in the interval: to be written in full. */
		FIRST,

		/** Counted for the summary. */
		COUNTED,

		/** Not recorded: the interval had ended. */
		ENDED

	}

	/** The denials of one client in one group during one interval. */
	private static final class Denials {

		final String client;

		final String route;

		final String group;

		private final Set<String> outcomes = new HashSet<>(4);

		private long suppressed;

		private boolean ended;

		Denials(String client, String route, String group) {
			this.client = client;
			this.route = route;
			this.group = group;
		}

		synchronized Recorded record(String outcome) {
			if (this.ended) {
				return Recorded.ENDED;
			}
			if (this.outcomes.add(outcome)) {
				return Recorded.FIRST;
			}
			this.suppressed++;
			return Recorded.COUNTED;
		}

		synchronized long end() {
			this.ended = true;
			return this.suppressed;
		}

	}

	/** Lines written during one interval of the line budget, and the denials left out once it was spent. */
	private static final class LineBudget {

		private long lines;

		private long suppressed;

		private boolean ended;

		/** @return whether a line may be written, {@code null} if this budget's interval has ended */
		synchronized @Nullable Boolean take(long maxLines) {
			if (this.ended) {
				return null;
			}
			if (this.lines < maxLines) {
				this.lines++;
				return true;
			}
			return false;
		}

		synchronized boolean suppress(long denials) {
			if (this.ended) {
				return false;
			}
			this.suppressed += denials;
			return true;
		}

		synchronized long end() {
			this.ended = true;
			return this.suppressed;
		}

	}

}
