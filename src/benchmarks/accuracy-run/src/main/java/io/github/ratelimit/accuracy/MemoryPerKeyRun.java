package io.github.ratelimit.accuracy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.SpringDataScriptExecutor;
import io.github.ratelimit.test.redis.RedisServer;
import org.awaitility.Awaitility;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Redis memory per idle key, per algorithm (a measurement, not a test): K distinct clients (default 200,000) each make
 * one check through the starter's {@link RedisRateLimitStore} with realistic key names (hashed API keys),
 * then {@code INFO memory} is read ({@code used_memory} grown per key: key, value, expiry and hash-table overhead)
 * along with {@code MEMORY USAGE} of one key; the calendar quota twice, with {@code period: month} and
 * {@code period: day} (UTC), each client admitted once. For each quota the TTL of every (K / 1,000)-th key is compared
 * with the time from Redis' clock to the end of the period (at most 1 s apart), and a separate check admits E clients
 * (default 10,000) once each on a quota of {@code period: 5s} within one period and polls {@code DBSIZE} until it is
 * back to what it was before them (at most 10 s after the period's end). Then one sliding window log is filled with 1
 * to 100,000 entries to show its cost per admitted token. Prints Markdown tables (and writes them with
 * {@code --out FILE}); exits with status 1 when a check was not admitted, a quota key's TTL is off by more than 1 s or
 * the 5 s quota's keys are not gone in time.
 *
 * <pre>
 * src/benchmarks/accuracy memory            # or: ... memory --keys 200000 --expiry-keys 10000 --out target/memory.md
 * </pre>
 */
public final class MemoryPerKeyRun {

	private static final Logger logger = LoggerFactory.getLogger(MemoryPerKeyRun.class);

	/** Quota keys whose TTL is compared with the time to the period's end. */
	private static final int TTL_SAMPLES = 1_000;

	/** Largest difference allowed between a quota key's TTL and the time to its period's end. */
	private static final Duration TTL_TOLERANCE = Duration.ofSeconds(1);

	/** The fixed quota period of the expiry check. */
	private static final Duration EXPIRY_PERIOD = Duration.ofSeconds(5);

	/** Longest wait, after the expiry check's period ended, for its keys to be gone. */
	private static final Duration EXPIRY_WAIT = Duration.ofSeconds(10);

	/** The quotas measured: a calendar month and a calendar day in UTC. */
	private static final List<QuotaPeriod> QUOTAS = List.of(QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneOffset.UTC),
			QuotaPeriod.of(QuotaPeriodUnit.DAY, ZoneOffset.UTC));

	private MemoryPerKeyRun() {
	}

	/**
	 * Run it.
	 * @param args {@code --keys K}, {@code --expiry-keys E}, {@code --redis redis://host:port} (else a redis-server
	 * from the PATH), {@code --out FILE}
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		int keys = 200_000;
		int expiryKeys = 10_000;
		String redis = null;
		Path out = null;
		for (int i = 0; i < args.length; i += 2) {
			switch (args[i]) {
				case "--keys" -> keys = Integer.parseInt(args[i + 1]);
				case "--expiry-keys" -> expiryKeys = Integer.parseInt(args[i + 1]);
				case "--redis" -> redis = args[i + 1];
				case "--out" -> out = Path.of(args[i + 1]);
				default -> throw new IllegalArgumentException("unknown option " + args[i]);
			}
		}
		RedisServer own = null;
		if (redis == null) {
			own = RedisServer.start();
			redis = own.uri();
		}
		List<String> failures = new ArrayList<>();
		try {
			String report = measure(redis, keys, expiryKeys, failures);
			System.out.println(report);
			if (out != null) {
				Files.writeString(out, report);
			}
		}
		finally {
			if (own != null) {
				own.close();
			}
		}
		failures.forEach((failure) -> System.err.println("FAILED: " + failure));
		System.exit(failures.isEmpty() ? 0 : 1);
	}

	static String measure(String redisUri, int keys, int expiryKeys, List<String> failures) {
		java.net.URI uri = java.net.URI.create(redisUri);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
		factory.afterPropertiesSet();
		factory.start();
		StringBuilder md = new StringBuilder();
		try (RedisAdmin admin = new RedisAdmin(redisUri)) {
			RedisRateLimitStore limiter = new RedisRateLimitStore(new SpringDataScriptExecutor(factory),
					new BucketKeys("rl"));
			md.append(String.format(Locale.ROOT, "Redis %s (%s), %,d clients, one check each (cost 1), plan 100 per 1h "
					+ "(the quotas: 100 per calendar month, per calendar day, UTC); key names as the starter writes "
					+ "them, e.g. `%s`.%n%n", admin.info("server", "redis_version"),
					admin.info("memory", "mem_allocator"), keys,
					new BucketKeys("rl").keysFor(client(0), limits(Algorithm.SLIDING_WINDOW_LOG)).get(0)));
			md.append("| algorithm | state | used_memory per key (INFO) | MEMORY USAGE of one key | TTL after one check |\n");
			md.append("|---|---|---:|---:|---:|\n");
			List<String> ttlRows = new ArrayList<>();
			for (Algorithm algorithm : Algorithm.values()) {
				if (algorithm.isConcurrency()) {
					continue; // a rate algorithm's state per key; a concurrency limit's grows with requests in flight
				}
				List<QuotaPeriod> periods = (algorithm == Algorithm.QUOTA) ? QUOTAS : java.util.Collections.singletonList(null);
				for (QuotaPeriod period : periods) {
					PlanLimits limits = (period != null) ? quota(period) : limits(algorithm);
					String label = algorithm.configName() + ((period != null) ? " (" + period.label() + ", UTC)" : "");
					Fill fill = fill(admin, limiter, limits, keys);
					if (fill.admitted() != keys) {
						failures.add(label + ": " + fill.admitted() + " of " + keys + " checks admitted");
					}
					long before = fill.usedMemoryBefore();
					long after = fill.usedMemoryAfter();
					long count = admin.longCommand("DBSIZE");
					String key = new BucketKeys("rl").keysFor(client(7), limits).get(0);
					long usage = admin.longCommand("MEMORY", "USAGE", key, "SAMPLES", "0");
					long ttl = admin.longCommand("PTTL", key);
					md.append(String.format(Locale.ROOT, "| %s | %s | %.0f B | %d B | %s |%n", label, state(algorithm),
							(after - before) / (double) count, usage, Duration.ofMillis(ttl)
								.withNanos(0).toString().substring(2).toLowerCase(Locale.ROOT)));
					logger.info("{}: {} keys, {} bytes per key", label, count, (after - before) / count);
					if (period != null) {
						ttlRows.add(ttls(admin, period, limits, keys, failures));
					}
				}
			}
			md.append(String.format(Locale.ROOT, "%nA quota key expires when its period ends: the PTTL of every %,d-th "
					+ "key (%,d keys) against the time from Redis' clock (`TIME`, read just before each PTTL) to the "
					+ "period's end, allowed to differ by at most %d ms:%n%n", keys / TTL_SAMPLES, TTL_SAMPLES,
					TTL_TOLERANCE.toMillis()));
			md.append("| quota | period end | keys | PTTL − time to the end: min | max | within ±1 s |\n");
			md.append("|---|---|---:|---:|---:|---|\n");
			ttlRows.forEach(md::append);
			md.append(expiry(admin, limiter, expiryKeys, failures));
			md.append("\nOne sliding window log holding n entries (one client that was admitted n tokens within "
					+ "the window; capacity 1,000,000 per hour):\n\n");
			md.append("| entries | encoding | MEMORY USAGE | per entry |\n|---:|---|---:|---:|\n");
			PlanLimits log = new PlanLimits("p", "search",
					List.of(LimitDefinition.window("p", Algorithm.SLIDING_WINDOW_LOG, 1_000_000, Duration.ofHours(1))));
			for (int entries : new int[] { 1, 10, 100, 128, 129, 1_000, 10_000, 100_000 }) {
				admin.flushAll();
				limiter.tryConsume(client(1), log, entries).orTimeout(30, TimeUnit.SECONDS).join();
				String key = new BucketKeys("rl").keysFor(client(1), log).get(0);
				long usage = admin.longCommand("MEMORY", "USAGE", key, "SAMPLES", "0");
				md.append(String.format(Locale.ROOT, "| %,d | %s | %,d B | %.1f B |%n", entries,
						admin.command("OBJECT", "ENCODING", key), usage, usage / (double) entries));
			}
			admin.flushAll();
		}
		finally {
			factory.destroy();
		}
		return md.toString();
	}

	/** What {@link #fill} did: checks admitted, {@code used_memory} before and after them. */
	private record Fill(long admitted, long usedMemoryBefore, long usedMemoryAfter) {
	}

	/**
	 * From an empty Redis (the script loaded), one check of cost 1 for each of {@code keys} clients.
	 */
	private static Fill fill(RedisAdmin admin, RedisRateLimitStore limiter, PlanLimits limits, int keys) {
		admin.flushAll();
		limiter.tryConsume(client(-1), limits, 1).orTimeout(5, TimeUnit.SECONDS).join(); // load the script
		admin.flushAll();
		long before = Long.parseLong(admin.info("memory", "used_memory"));
		AtomicLong admitted = new AtomicLong();
		Flux.range(0, keys).flatMap((i) -> Mono.fromFuture(limiter.tryConsume(client(i), limits, 1)), 64)
			.doOnNext((decision) -> {
				if (decision.allowed()) {
					admitted.incrementAndGet();
				}
			})
			.blockLast(Duration.ofMinutes(10));
		long after = Long.parseLong(admin.info("memory", "used_memory"));
		return new Fill(admitted.get(), before, after);
	}

	/**
	 * The TTL of every (keys / {@value #TTL_SAMPLES})-th quota key against the time from Redis' clock to its period's
	 * end: one table row; a difference above {@link #TTL_TOLERANCE} (or a key without TTL) is a failure.
	 */
	private static String ttls(RedisAdmin admin, QuotaPeriod period, PlanLimits limits, int keys,
			List<String> failures) {
		int step = Math.max(1, keys / TTL_SAMPLES);
		long min = Long.MAX_VALUE;
		long max = Long.MIN_VALUE;
		int sampled = 0;
		Instant end = null;
		for (int i = 0; i < keys; i += step) {
			String key = new BucketKeys("rl").keysFor(client(i), limits).get(0);
			Instant now = admin.time();
			long ttl = admin.longCommand("PTTL", key);
			QuotaPeriod.Interval current = period.periodAt(now);
			end = current.end();
			long difference = ttl - Duration.between(now, current.end()).toMillis();
			min = Math.min(min, difference);
			max = Math.max(max, difference);
			sampled++;
		}
		boolean within = sampled > 0 && Math.abs(min) <= TTL_TOLERANCE.toMillis()
				&& Math.abs(max) <= TTL_TOLERANCE.toMillis();
		if (!within) {
			failures.add("quota " + period.label() + ": PTTL minus the time to the period's end from " + min + " to "
					+ max + " ms over " + sampled + " keys");
		}
		return String.format(Locale.ROOT, "| %s (UTC) | %s | %,d | %+d ms | %+d ms | %s |%n", period.label(), end,
				sampled, min, max, within ? "yes" : "NO");
	}

	/**
	 * The expiry check: {@code clients} clients admitted once each on a quota of {@link #EXPIRY_PERIOD} within one
	 * period, then {@code DBSIZE} polled until it is back to its value before them, at most {@link #EXPIRY_WAIT} after
	 * the period's end (a failure otherwise). Returns the Markdown paragraph and table.
	 */
	private static String expiry(RedisAdmin admin, RedisRateLimitStore limiter, int clients, List<String> failures) {
		QuotaPeriod period = QuotaPeriod.fixed(EXPIRY_PERIOD);
		PlanLimits limits = quota(period);
		admin.flushAll();
		limiter.tryConsume(client(-1), limits, 1).orTimeout(5, TimeUnit.SECONDS).join(); // load the script
		admin.flushAll();
		admin.command("SET", "rl:plan:not-a-quota", "free"); // a key without TTL: the baseline is not an empty Redis
		long baseline = admin.longCommand("DBSIZE");
		long memoryBefore = Long.parseLong(admin.info("memory", "used_memory"));
		// start at the beginning of a period, so that every check lands in the same one
		Awaitility.await("the start of a " + period.label() + " period")
			.atMost(EXPIRY_PERIOD.plusSeconds(1))
			.pollInterval(Duration.ofMillis(5))
			.until(() -> period.untilEnd(admin.time()).compareTo(EXPIRY_PERIOD.minusMillis(500)) >= 0);
		QuotaPeriod.Interval first = period.periodAt(admin.time());
		AtomicLong admitted = new AtomicLong();
		Flux.range(0, clients).flatMap((i) -> Mono.fromFuture(limiter.tryConsume(client(i), limits, 1)), 64)
			.doOnNext((decision) -> {
				if (decision.allowed()) {
					admitted.incrementAndGet();
				}
			})
			.blockLast(Duration.ofMinutes(1));
		Instant written = admin.time();
		long withKeys = admin.longCommand("DBSIZE");
		long memoryWithKeys = Long.parseLong(admin.info("memory", "used_memory"));
		QuotaPeriod.Interval last = period.periodAt(written);
		if (!last.equals(first) || admitted.get() != clients || withKeys != baseline + clients) {
			failures.add("expiry check: " + admitted + " of " + clients + " admitted, DBSIZE " + withKeys
					+ " (baseline " + baseline + "), checks from " + first + " to " + written
					+ " (all must be in one period; fewer clients with --expiry-keys)");
		}
		Instant gone;
		try {
			Awaitility.await("DBSIZE back to " + baseline)
				.atMost(Duration.between(written, last.end()).plus(EXPIRY_WAIT))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> admin.longCommand("DBSIZE") == baseline);
			gone = admin.time();
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			gone = null;
			failures.add("expiry check: DBSIZE " + admin.longCommand("DBSIZE") + ", not back to " + baseline + " "
					+ EXPIRY_WAIT.toSeconds() + " s after the period ended at " + last.end());
		}
		long memoryAfter = Long.parseLong(admin.info("memory", "used_memory"));
		admin.flushAll();
		StringBuilder md = new StringBuilder();
		md.append(String.format(Locale.ROOT, "%nExpiry: a quota of `period: %s` (aligned to the epoch), from the start "
				+ "of one period %,d clients admitted once each, then `DBSIZE` polled every 10 ms (Redis' clock) until "
				+ "it is back to its value before them (one key without a TTL stands for the plan keys that stay):%n%n",
				period.label(), clients));
		md.append("| clients admitted | DBSIZE before | after the checks | checks done | period end | DBSIZE back to "
				+ "before | after the end | used_memory before | with the keys | after |\n");
		md.append("|---:|---:|---:|---|---|---|---:|---:|---:|---:|\n");
		md.append(String.format(Locale.ROOT, "| %,d | %,d | %,d | %s | %s | %s | %s | %,d | %,d | %,d |%n",
				admitted.get(), baseline, withKeys, written, last.end(), (gone != null) ? gone : "not within "
						+ EXPIRY_WAIT.toSeconds() + " s",
				(gone != null) ? Duration.between(last.end(), gone).toMillis() + " ms" : "-", memoryBefore,
				memoryWithKeys, memoryAfter));
		return md.toString();
	}

	private static PlanLimits quota(QuotaPeriod period) {
		return new PlanLimits("p", "search", List.of(LimitDefinition.quota("p", 100, period)));
	}

	private static String state(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> "one integer (tat, µs)";
			case SLIDING_WINDOW_LOG -> "sorted set, 1 entry per admitted token";
			case SLIDING_WINDOW_COUNTER -> "hash {w, c, p}";
			case FIXED_WINDOW -> "hash {w, c}";
			case CONCURRENCY -> "sorted set, 1 entry per request in flight";
			case QUOTA -> "hash {p, c}";
		};
	}

	private static ClientKey client(int i) {
		return new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash("api-key-" + i), "p");
	}

	private static PlanLimits limits(Algorithm algorithm) {
		LimitDefinition limit = (algorithm == Algorithm.TOKEN_BUCKET) ? new LimitDefinition("p", 100, 100, Duration.ofHours(1))
				: LimitDefinition.window("p", algorithm, 100, Duration.ofHours(1));
		return new PlanLimits("p", "search", List.of(limit));
	}

}
