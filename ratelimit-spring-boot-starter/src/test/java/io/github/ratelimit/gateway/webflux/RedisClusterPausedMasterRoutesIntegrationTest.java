package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.ShardClockReadings;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.SteadyTraffic;
import io.github.ratelimit.test.redis.RedisCluster;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A request decided without Redis takes nothing in Redis on a Cluster too: one master of a real 3-master Redis
 * Cluster (no replicas, {@code cluster-require-full-coverage no}) is paused (SIGSTOP) for 2 s, longer than the limiter
 * waits (200 ms) and than Lettuce's command timeout (500 ms), under steady traffic of one client per master (route
 * {@code /late}, a bucket of 100,000 tokens refilled 1 per hour). After SIGCONT, each master's bucket holds exactly
 * what the requests Redis decided (200 with RateLimit fields) took: on the paused master, nothing of the fallback's
 * decisions nor of the checks it ran late (refused past their deadline); the other masters' clients were decided by
 * Redis throughout. Also the first test that each master's clock is read (the deadline of a check goes to the master
 * holding its keys, in that master's time).
 *
 * <p>The node timeout is 15 s, well above the pause: a master paused longer than the node timeout is marked failed by
 * the others, and without a replica its slots are then served by nobody (or, with full coverage required, the whole
 * cluster answers CLUSTERDOWN). 15 s also leaves a loaded machine's stalls no chance to do it.
 */
@TestPropertySource(properties = { "ratelimit.redis-timeout=200ms", "spring.data.redis.timeout=500ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s" })
class RedisClusterPausedMasterRoutesIntegrationTest extends ClusterRedisRouteIntegrationTest {

	private static final Duration NODE_TIMEOUT = Duration.ofSeconds(15);

	private static final Duration PAUSE = Duration.ofSeconds(2);

	private static final RedisCluster cluster = use(RedisCluster.start(3, 0, NODE_TIMEOUT, false));

	private static final MachineStalls stalls = MachineStalls.meter();

	private static final long CAPACITY = 100_000;

	private static final long HOUR_MICROS = 3_600_000_000L;

	private static final BucketKeys KEYS = new BucketKeys("rl");

	private static final PlanLimits LATE = new PlanLimits("anonymous", "late",
			List.of(new LimitDefinition("x", CAPACITY, 1, Duration.ofHours(1))));

	@Autowired
	private RedisRateLimitStore store;

	@Test
	void aPausedMasterKeepsExactlyWhatItsRedisDecidedRequestsTook() throws Exception {
		// one client per master, the paused master's first
		List<RedisCluster.Node> masters = cluster.masters();
		List<Client> traffic = new ArrayList<>();
		for (RedisCluster.Node master : masters) {
			for (int i = 1; i < 1000; i++) {
				String ip = "10.1." + (i / 250) + "." + (i % 250 + 1);
				if (master.equals(cluster.masterOf(bucket(ip)))) {
					traffic.add(new Client(ip, master, this.client));
					break;
				}
			}
		}
		assertThat(traffic).hasSize(3);
		RedisCluster.Node paused = traffic.get(0).master();
		traffic.forEach((t) -> t.traffic().start());
		long pausedAt;
		long resumedAt;
		try {
			await().atMost(Duration.ofSeconds(20))
				.until(() -> traffic.stream().allMatch((t) -> t.fromRedis() >= 3));
			// every master's clock has been read: a check's deadline is in the time of the master it goes to
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				for (RedisCluster.Node master : masters) {
					long before = time(master);
					long inShard = ShardClockReadings.nowInEachShard(this.store).getOrDefault(master.address(), -1L);
					long after = time(master);
					assertThat(inShard).as("now in the time of %s, between its TIME before (%d) and after", master,
							before)
						.isPositive()
						.isLessThanOrEqualTo(after)
						.isGreaterThan(before - Duration.ofSeconds(2).toNanos() / 1000);
				}
			});
			System.out.println("Clocks: " + ShardClockReadings.nowInEachShard(this.store));
			int[] fromRedis = traffic.stream().mapToInt(Client::fromRedis).toArray();
			int withoutRedis = traffic.get(0).withoutRedis();
			cluster.pause(paused);
			pausedAt = System.nanoTime();
			try {
				// the paused master's client was decided without Redis, the others by Redis, for the whole pause
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
					.until(() -> traffic.get(0).withoutRedis() > withoutRedis
							&& traffic.get(1).fromRedis() > fromRedis[1]
							&& traffic.get(2).fromRedis() > fromRedis[2]
							&& System.nanoTime() - pausedAt >= PAUSE.toNanos());
			}
			finally {
				cluster.resume(paused);
				resumedAt = System.nanoTime();
			}
			int back = traffic.get(0).fromRedis();
			await().atMost(Duration.ofSeconds(30)).until(() -> traffic.get(0).fromRedis() > back);
		}
		finally {
			SteadyTraffic.stopAll(traffic.stream().map(Client::traffic).toList());
		}
		long stalledMillis = stalls.stalledNanos(pausedAt, resumedAt) / 1_000_000;
		System.out.println("One master of three paused " + (resumedAt - pausedAt) / 1_000_000 + " ms (machine stalled "
				+ stalledMillis + " ms meanwhile): " + traffic);
		assertThat(traffic.get(0).withoutRedis()).as("paused master's client decided without Redis").isPositive();
		if (stalledMillis < 100) {
			// a stall of the test JVM longer than the limiter's 200 ms wait could send a live master's check to the
			// fallback too; none here
			assertThat(traffic.subList(1, 3)).as("clients of the live masters, decided by Redis throughout")
				.allSatisfy((t) -> assertThat(t.withoutRedis()).as(t.ip()).isZero());
		}
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			for (Client t : traffic) {
				assertThat(tokensTaken(t)).as("tokens taken from %s's bucket on %s", t.ip(), t.master())
					.isEqualTo(t.fromRedis());
			}
		});
	}

	private static long time(RedisCluster.Node master) {
		String[] time = master.command("TIME").split("\n");
		return Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
	}

	private static long tokensTaken(Client client) {
		return Math.round(CAPACITY - StoredTokens.of(client.master()::command, bucket(client.ip()), CAPACITY, 1,
				HOUR_MICROS));
	}

	private static String bucket(String ip) {
		return KEYS.keysFor(new ClientKey(ClientKey.Kind.IP, ip, "anonymous"), LATE).get(0);
	}

	/**
	 * One client (an address) of one master sending requests one after another: withoutRedis, those decided by the
	 * local fallback (200 without RateLimit fields).
	 */
	private record Client(String ip, RedisCluster.Node master, SteadyTraffic traffic) {

		Client(String ip, RedisCluster.Node master, WebTestClient client) {
			this(ip, master, new SteadyTraffic(ip + "@" + master.port(), () -> {
				EntityExchangeResult<byte[]> result = client.get()
					.uri("/late/x")
					.header("X-Forwarded-For", ip)
					.exchange()
					.expectBody()
					.returnResult();
				return new SteadyTraffic.Answer(result.getStatus().value(),
						result.getResponseHeaders().getFirst("RateLimit"));
			}));
		}

		int fromRedis() {
			return this.traffic.fromRedis();
		}

		int withoutRedis() {
			return this.traffic.fallback();
		}

		@Override
		public String toString() {
			return this.traffic.toString();
		}

	}

}
