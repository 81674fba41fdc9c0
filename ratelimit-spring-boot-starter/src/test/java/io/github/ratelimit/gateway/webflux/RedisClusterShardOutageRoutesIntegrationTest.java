package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.test.redis.RedisCluster;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One master of a real 3-master Redis Cluster (no replicas, {@code cluster-require-full-coverage no}) dies: only the
 * clients whose buckets it held are decided by the local fallback (and get 503 on the critical route); every other
 * client keeps exact decisions from Redis. The master killed is the one holding the group-wide bucket of a group with
 * a global limit: every request of that group is decided by the fallback, and the clients' own tokens taken on the
 * live masters are given back. The health component names the degraded shard, the breaker meters count its
 * transitions. Once the master is back, every client is decided by Redis again.
 */
@TestPropertySource(properties = { "ratelimit.circuit-breaker.wait-duration-in-open-state=1s",
		"management.endpoints.web.exposure.include=health" })
class RedisClusterShardOutageRoutesIntegrationTest extends ClusterRedisRouteIntegrationTest {

	/**
	 * No replicas, so no failover to wait for: the default node timeout (5 s), long enough that a node a loaded
	 * machine leaves unscheduled for a second is not marked failed by the others.
	 */
	private static final RedisCluster cluster = use(RedisCluster.start(3, 0, RedisCluster.DEFAULT_NODE_TIMEOUT, false));

	private static final int CLIENTS = 30;

	private static final BucketKeys KEYS = new BucketKeys("rl");

	private static final PlanLimits ONE_LIMIT = new PlanLimits("anonymous", "ip",
			List.of(new LimitDefinition("x", 2, 1, Duration.ofMinutes(1))));

	@Override
	protected void emptyBuckets() {
		super.emptyBuckets();
		this.overLimitCache.clear();
	}

	@Test
	void aDeadMasterSendsOnlyItsOwnClientsToTheFallback() {
		RedisCluster.Node dead = cluster.masterOf(KEYS.keysFor(ClientKey.everyone("anonymous"),
				new PlanLimits("anonymous", "shared", ONE_LIMIT.limits())).get(0));
		List<String> onDead = new ArrayList<>();
		List<String> onLive = new ArrayList<>();
		List<String> loginOnDead = new ArrayList<>();
		for (int i = 1; i <= CLIENTS; i++) {
			String ip = "198.51.100." + i;
			(dead.equals(cluster.masterOf(bucket(ip, "ip"))) ? onDead : onLive).add(ip);
			if (dead.equals(cluster.masterOf(bucket(ip, "login")))) {
				loginOnDead.add(ip);
			}
		}
		assertThat(onDead).as("clients on the master to kill").isNotEmpty();
		assertThat(onLive).as("clients on the other masters").hasSizeGreaterThan(onDead.size());
		// the limiter's connection knows the topology and has a connection to every master before the kill, as a
		// gateway in service has (Lettuce opens a master's connection on its first command)
		for (RedisCluster.Node master : cluster.masters()) {
			String ip = java.util.stream.Stream.concat(onDead.stream(), onLive.stream())
				.filter((client) -> master.equals(cluster.masterOf(bucket(client, "ip"))))
				.findFirst()
				.orElseThrow();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> request("/ip/warm", ip).getResponseHeaders().getFirst("RateLimit") != null);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> request("/auth/login", ip).getResponseHeaders().getFirst("RateLimit") != null);
		}
		List<Long> beforeMillis = new ArrayList<>();
		for (String ip : onLive) {
			for (int n = 1; n <= 3; n++) {
				long start = System.nanoTime();
				request("/ip/" + n, ip);
				beforeMillis.add((System.nanoTime() - start) / 1_000_000);
			}
		}
		emptyBuckets();

		cluster.kill(dead);
		long killedAt = System.nanoTime();
		List<Long> liveMillis = new ArrayList<>();
		for (String ip : onLive) {
			// exact decisions from Redis: capacity 2, then a denial that names the policy
			for (int n = 1; n <= 3; n++) {
				long start = System.nanoTime();
				EntityExchangeResult<byte[]> result = request("/ip/" + n, ip);
				liveMillis.add((System.nanoTime() - start) / 1_000_000);
				assertThat(result.getStatus().value()).as("request %d of %s", n, ip).isEqualTo((n <= 2) ? 200 : 429);
				// remaining exact; t may be a few seconds lower when the loaded machine left seconds between requests
				assertThat(result.getResponseHeaders().getFirst("RateLimit")).as("request %d of %s", n, ip)
					.matches(aboutRateLimit(
							"\"anonymous-ip\";r=" + Math.max(0, 2 - n) + ";t=" + ((n == 1) ? 60 : 120)));
			}
		}
		for (String ip : onDead) {
			// the local fallback: this instance's share (one instance: the whole capacity of 2), no RateLimit fields
			for (int n = 1; n <= 3; n++) {
				EntityExchangeResult<byte[]> result = request("/ip/" + n, ip);
				assertThat(result.getStatus().value()).as("request %d of %s", n, ip).isEqualTo((n <= 2) ? 200 : 429);
				assertThat(result.getResponseHeaders().getFirst("RateLimit")).as("request %d of %s", n, ip).isNull();
			}
		}
		// the critical route fails closed only for the clients whose login bucket is on the dead master
		int closed = 0;
		for (int i = 1; i <= CLIENTS; i++) {
			String ip = "198.51.100." + i;
			boolean deadShard = loginOnDead.contains(ip);
			int status = request("/auth/login", ip).getStatus().value();
			assertThat(status).as("login of %s (bucket on the dead master: %s)", ip, deadShard)
				.isEqualTo(deadShard ? 503 : 200);
			closed += deadShard ? 1 : 0;
		}
		// the group-wide bucket is on the dead master: the whole group is decided locally, whatever the client's shard
		for (int i = 1; i <= CLIENTS; i++) {
			EntityExchangeResult<byte[]> result = request("/shared/1", "198.51.100." + i);
			assertThat(result.getStatus().value()).isEqualTo(200);
			assertThat(result.getResponseHeaders().getFirst("RateLimit")).isNull();
		}
		// the dead master's breaker stays open for 1 s, then lets trial calls through (half-open) until they fail: on a
		// loaded machine the health may be read between the two, so a request of the shared group (a client of no
		// other assertion) drives the breaker until the health is read while it is open
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
			request("/shared/1", "203.0.113.99");
			this.client.get().uri("/actuator/health").exchange().expectBody()
				.jsonPath("$.components.rateLimiter.status").isEqualTo("UP")
				.jsonPath("$.components.rateLimiter.details.decisions").isEqualTo("redis-and-local-fallback")
				.jsonPath("$.components.rateLimiter.details.degradedShards").isEqualTo(List.of(dead.address()))
				.jsonPath("$.components.rateLimiter.details.shards['" + dead.address() + "']").isEqualTo("OPEN");
		});
		assertThat(this.meters.find("ratelimit.circuitbreaker.transitions")
			.tags("breaker", "ratelimit-redis@" + dead.address(), "to", "open")
			.counter()).isNotNull();
		liveMillis.sort(null);
		beforeMillis.sort(null);
		long before = beforeMillis.get(beforeMillis.size() / 2);
		long during = liveMillis.get(liveMillis.size() / 2);
		System.out.printf("One master of three killed: %d of %d clients on it (local fallback, login 503 for %d), "
				+ "the others decided by Redis: median %d ms per request (%d ms before the kill), max %d ms, "
				+ "%d ms after the kill%n", onDead.size(), CLIENTS, closed, during, before,
				liveMillis.get(liveMillis.size() - 1), (System.nanoTime() - killedAt) / 1_000_000);
		// the clients of the live masters wait for nothing of the dead one (a loose bound: the machine may be busy)
		assertThat(during).as("median ms per request of live-master clients, %d ms before the kill", before)
			.isLessThanOrEqualTo(before + 25);

		cluster.restart(dead);
		long restartedAt = System.nanoTime();
		// back: every client decided by Redis again (the master restarted empty: fresh buckets)
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
			.until(() -> request("/ip/back", onDead.get(0)).getResponseHeaders().getFirst("RateLimit") != null);
		long backMillis = (System.nanoTime() - restartedAt) / 1_000_000;
		for (String ip : onDead) {
			// each within seconds: the breaker closes through its half-open trials, which a loaded machine may stretch
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
				.untilAsserted(() -> assertThat(request("/ip/again", ip).getResponseHeaders().getFirst("RateLimit"))
					.as("after the restart, %s", ip)
					.isNotNull());
		}
		for (int i = 1; i <= CLIENTS; i++) {
			String ip = "198.51.100." + i;
			assertThat(request("/auth/login", ip).getStatus().value()).isEqualTo(200);
			// one token of 2 taken: the request of the outage took nothing from the client's own bucket (given back
			// where it lives on a live master)
			assertThat(request("/shared/2", ip).getResponseHeaders().getFirst("RateLimit"))
				.startsWith("\"anonymous-shared-1m\";r=1;");
		}
		this.client.get().uri("/actuator/health").exchange().expectBody()
			.jsonPath("$.components.rateLimiter.details.decisions").isEqualTo("redis")
			.jsonPath("$.components.rateLimiter.details.degradedShards").isEmpty();
		System.out.printf("Master restarted: its clients decided by Redis again %d ms later%n", backMillis);
	}

	private EntityExchangeResult<byte[]> request(String path, String ip) {
		return this.client.get().uri(path).header("X-Forwarded-For", ip).exchange().expectBody().returnResult();
	}

	private static String bucket(String ip, String group) {
		PlanLimits limits = new PlanLimits(ONE_LIMIT.plan(), group, ONE_LIMIT.limits());
		return KEYS.keysFor(new ClientKey(ClientKey.Kind.IP, ip, "anonymous"), limits).get(0);
	}

}
