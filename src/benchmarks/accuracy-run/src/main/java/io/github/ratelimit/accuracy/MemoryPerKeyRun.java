package io.github.ratelimit.accuracy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.SpringDataScriptExecutor;
import io.github.ratelimit.test.redis.RedisServer;
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
 * along with {@code MEMORY USAGE} of one key. Then one sliding window log is filled with 1 to 100,000 entries to show
 * its cost per admitted token. Prints a Markdown table (and writes it with {@code --out FILE}).
 *
 * <pre>
 * src/benchmarks/accuracy memory            # or: ... memory --keys 200000 --out target/memory.md
 * </pre>
 */
public final class MemoryPerKeyRun {

	private static final Logger logger = LoggerFactory.getLogger(MemoryPerKeyRun.class);

	private MemoryPerKeyRun() {
	}

	/**
	 * Run it.
	 * @param args {@code --keys K}, {@code --redis redis://host:port} (else a redis-server from the PATH),
	 * {@code --out FILE}
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		int keys = 200_000;
		String redis = null;
		Path out = null;
		for (int i = 0; i < args.length; i += 2) {
			switch (args[i]) {
				case "--keys" -> keys = Integer.parseInt(args[i + 1]);
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
		try {
			String report = measure(redis, keys);
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
		System.exit(0);
	}

	static String measure(String redisUri, int keys) {
		java.net.URI uri = java.net.URI.create(redisUri);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
		factory.afterPropertiesSet();
		factory.start();
		StringBuilder md = new StringBuilder();
		try (RedisAdmin admin = new RedisAdmin(redisUri)) {
			RedisRateLimitStore limiter = new RedisRateLimitStore(new SpringDataScriptExecutor(factory),
					new BucketKeys("rl"));
			md.append(String.format(Locale.ROOT, "Redis %s (%s), %,d clients, one check each (cost 1), plan 100 per 1h; "
					+ "key names as the starter writes them, e.g. `%s`.%n%n", admin.info("server", "redis_version"),
					admin.info("memory", "mem_allocator"), keys,
					new BucketKeys("rl").keysFor(client(0), limits(Algorithm.SLIDING_WINDOW_LOG)).get(0)));
			md.append("| algorithm | state | used_memory per key (INFO) | MEMORY USAGE of one key | TTL after one check |\n");
			md.append("|---|---|---:|---:|---:|\n");
			for (Algorithm algorithm : Algorithm.values()) {
				if (algorithm.isConcurrency()) {
					continue; // a rate algorithm's state per key; a concurrency limit's grows with requests in flight
				}
				admin.flushAll();
				PlanLimits limits = limits(algorithm);
				limiter.tryConsume(client(-1), limits, 1).orTimeout(5, TimeUnit.SECONDS).join(); // load the script
				admin.flushAll();
				long before = Long.parseLong(admin.info("memory", "used_memory"));
				Flux.range(0, keys).flatMap((i) -> Mono.fromFuture(limiter.tryConsume(client(i), limits, 1)), 64)
					.blockLast(Duration.ofMinutes(10));
				long after = Long.parseLong(admin.info("memory", "used_memory"));
				long count = admin.longCommand("DBSIZE");
				String key = new BucketKeys("rl").keysFor(client(7), limits).get(0);
				long usage = admin.longCommand("MEMORY", "USAGE", key, "SAMPLES", "0");
				long ttl = admin.longCommand("PTTL", key);
				md.append(String.format(Locale.ROOT, "| %s | %s | %.0f B | %d B | %s |%n", algorithm.configName(),
						state(algorithm), (after - before) / (double) count, usage, Duration.ofMillis(ttl)
							.withNanos(0).toString().substring(2).toLowerCase(Locale.ROOT)));
				logger.info("{}: {} keys, {} bytes per key", algorithm, count, (after - before) / count);
			}
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

	private static String state(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> "one integer (tat, µs)";
			case SLIDING_WINDOW_LOG -> "sorted set, 1 entry per admitted token";
			case SLIDING_WINDOW_COUNTER -> "hash {w, c, p}";
			case FIXED_WINDOW -> "hash {w, c}";
			case CONCURRENCY -> "sorted set, 1 entry per request in flight";
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
