package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.test.redis.RedisCluster;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.test.context.TestPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failover of a real Redis Cluster (3 masters, 3 replicas) under traffic: the master owning a hot client's slot is
 * killed; its replica takes over; the gateway serves that client from the local fallback meanwhile, never with a
 * 5xx on normal routes, and decides from Redis again once Lettuce has followed the new topology (the starter's
 * default topology refresh; nothing else is configured).
 */
// 1 s: checks to the killed master are refused at once (its connection is gone), so the timeout only bounds the
// checks in flight at the kill; 200 ms let a loaded machine's ordinary checks fall back (stressed run 41)
@TestPropertySource(properties = "ratelimit.redis-timeout=1s")
class RedisClusterFailoverRoutesIntegrationTest extends ClusterRedisRouteIntegrationTest {

	/** A short node timeout: the replica is promoted about 2 s after the kill. */
	private static final RedisCluster cluster = use(RedisCluster.start(3, 1, Duration.ofSeconds(1)));

	private static final String HOT_KEY = "hot-client-key";

	@Test
	void aReplicaTakesOverAndDecisionsComeFromRedisAgainWithoutAny5xx() {
		provision(cluster, HOT_KEY, "free");
		for (int i = 0; i < 5; i++) {
			provision(cluster, "other-key-" + i, "free");
		}
		WebClient web = pooledWebClient();
		// every client's plan is looked up (and cached) before the kill: a key whose plan cannot be looked up is
		// limited by IP under the anonymous plan, by design
		for (String apiKey : List.of(HOT_KEY, "other-key-0", "other-key-1", "other-key-2", "other-key-3",
				"other-key-4")) {
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				Result result = request(web, "/steady/warm", apiKey).block(Duration.ofSeconds(10));
				return fromRedis(result) && result.rateLimit().startsWith("\"free-steady\"");
			});
		}
		String bucket = bucketKey(HOT_KEY, "free", "steady");
		RedisCluster.Node owner = cluster.masterOf(bucket);
		RedisCluster.Node replica = cluster.replicasOf(owner).get(0);

		// traffic: the hot client every 10 ms, five other clients every 50 ms, until the end of the test
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		List<Long> fallbackAt = new CopyOnWriteArrayList<>();
		AtomicLong lastFromRedisAt = new AtomicLong();
		Disposable hot = Flux.interval(Duration.ofMillis(10))
			.onBackpressureDrop()
			.flatMap((i) -> hotRequest(web), 8)
			.subscribe((result) -> {
				statuses.computeIfAbsent(result.status(), (s) -> new AtomicInteger()).incrementAndGet();
				if (fromRedis(result)) {
					lastFromRedisAt.set(System.nanoTime());
				}
				else {
					fallbackAt.add(System.nanoTime());
				}
			});
		Disposable others = Flux.interval(Duration.ofMillis(50))
			.onBackpressureDrop()
			.flatMap((i) -> request(web, "/steady/" + i, "other-key-" + (i % 5)), 8)
			.subscribe((result) -> statuses.computeIfAbsent(result.status(), (s) -> new AtomicInteger())
				.incrementAndGet());
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> statuses.values().stream()
				.mapToInt(AtomicInteger::get).sum() > 50);
			long killedAt = System.nanoTime();
			cluster.kill(owner);
			RedisCluster.Node promoted = cluster.awaitFailover(owner);
			long failedOverAt = System.nanoTime();
			assertThat(promoted).isEqualTo(replica);
			assertThat(cluster.masterOf(bucket)).isEqualTo(promoted);

			// the gateway follows the new topology: decisions for the hot client come from Redis again
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
				.until(() -> lastFromRedisAt.get() > failedOverAt && fallbackAt.stream().allMatch((t) -> t < lastFromRedisAt.get()));
			long backAt = lastFromRedisAt.get();
			assertThat(fallbackAt).as("the fallback served while the slot had no master").isNotEmpty();
			// the promoted replica had no script cached: NOSCRIPT, then EVAL, then EVALSHA
			assertThat(promoted.info("INFO", "commandstats")).containsKeys("cmdstat_eval", "cmdstat_evalsha");
			System.out.printf("Failover under traffic: replica promoted %d ms after the kill, decisions from Redis "
					+ "again %d ms after the kill; %d hot-client requests served by the fallback%n",
					(failedOverAt - killedAt) / 1_000_000, (backAt - killedAt) / 1_000_000, fallbackAt.size());
		}
		finally {
			hot.dispose();
			others.dispose();
		}
		// every request answered, none with a 5xx (nor a 429: the steady route admits 1,000 per second)
		assertThat(statuses.keySet()).as("statuses %s", statuses).containsOnly(200);
	}

	private static Mono<Result> hotRequest(WebClient web) {
		return request(web, "/steady/x", HOT_KEY);
	}

	private static Mono<Result> request(WebClient web, String path, String apiKey) {
		return web.get().uri(path).header("X-API-Key", apiKey)
			.exchangeToMono((response) -> response.releaseBody()
				.thenReturn(new Result(response.statusCode().value(),
						response.headers().asHttpHeaders().getFirst("RateLimit"))))
			.onErrorResume((ex) -> Mono.just(new Result(-1, null)));
	}

	/** Decisions from Redis carry the RateLimit fields; the local fallback leaves them out. */
	private static boolean fromRedis(Result result) {
		return result.status() == 200 && result.rateLimit() != null;
	}

	private record Result(int status, String rateLimit) {
	}

}
