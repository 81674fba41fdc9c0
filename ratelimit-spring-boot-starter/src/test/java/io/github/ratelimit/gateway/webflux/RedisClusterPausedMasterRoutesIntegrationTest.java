package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.ShardClockReadings;
import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.RedisCluster;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

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
		List<Traffic> traffic = new ArrayList<>();
		for (RedisCluster.Node master : masters) {
			for (int i = 1; i < 1000; i++) {
				String ip = "10.1." + (i / 250) + "." + (i % 250 + 1);
				if (master.equals(cluster.masterOf(bucket(ip)))) {
					traffic.add(new Traffic(ip, master));
					break;
				}
			}
		}
		assertThat(traffic).hasSize(3);
		RedisCluster.Node paused = traffic.get(0).master;
		traffic.forEach(Traffic::start);
		long pausedAt;
		long resumedAt;
		try {
			await().atMost(Duration.ofSeconds(20))
				.until(() -> traffic.stream().allMatch((t) -> t.fromRedis.get() >= 3));
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
			int[] fromRedis = traffic.stream().mapToInt((t) -> t.fromRedis.get()).toArray();
			int withoutRedis = traffic.get(0).withoutRedis.get();
			cluster.pause(paused);
			pausedAt = System.nanoTime();
			try {
				// the paused master's client was decided without Redis, the others by Redis, for the whole pause
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
					.until(() -> traffic.get(0).withoutRedis.get() > withoutRedis
							&& traffic.get(1).fromRedis.get() > fromRedis[1]
							&& traffic.get(2).fromRedis.get() > fromRedis[2]
							&& System.nanoTime() - pausedAt >= PAUSE.toNanos());
			}
			finally {
				cluster.resume(paused);
				resumedAt = System.nanoTime();
			}
			int back = traffic.get(0).fromRedis.get();
			await().atMost(Duration.ofSeconds(30)).until(() -> traffic.get(0).fromRedis.get() > back);
		}
		finally {
			for (Traffic t : traffic) {
				t.stop();
			}
		}
		long stalledMillis = stalls.stalledNanos(pausedAt, resumedAt) / 1_000_000;
		System.out.println("One master of three paused " + (resumedAt - pausedAt) / 1_000_000 + " ms (machine stalled "
				+ stalledMillis + " ms meanwhile): " + traffic);
		assertThat(traffic.get(0).withoutRedis.get()).as("paused master's client decided without Redis").isPositive();
		if (stalledMillis < 100) {
			// a stall of the test JVM longer than the limiter's 200 ms wait could send a live master's check to the
			// fallback too; none here
			assertThat(traffic.subList(1, 3)).as("clients of the live masters, decided by Redis throughout")
				.allSatisfy((t) -> assertThat(t.withoutRedis.get()).as(t.ip).isZero());
		}
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			for (Traffic t : traffic) {
				assertThat(tokensTaken(t)).as("tokens taken from %s's bucket on %s", t.ip, t.master)
					.isEqualTo(t.fromRedis.get());
			}
		});
	}

	private static long time(RedisCluster.Node master) {
		String[] time = master.command("TIME").split("\n");
		return Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
	}

	private static long tokensTaken(Traffic traffic) {
		return Math.round(CAPACITY - StoredTokens.of(traffic.master::command, bucket(traffic.ip), CAPACITY, 1,
				HOUR_MICROS));
	}

	private static String bucket(String ip) {
		return KEYS.keysFor(new ClientKey(ClientKey.Kind.IP, ip, "anonymous"), LATE).get(0);
	}

	/** One client (an address) sending requests one after another, counting who decided them. */
	private final class Traffic {

		final String ip;

		final RedisCluster.Node master;

		/** 200 with RateLimit fields: Redis decided (and admitted). */
		final AtomicInteger fromRedis = new AtomicInteger();

		/** Decided by the local fallback: 200 without RateLimit fields. */
		final AtomicInteger withoutRedis = new AtomicInteger();

		private final AtomicInteger other = new AtomicInteger();

		private final AtomicBoolean stopped = new AtomicBoolean();

		private final Thread thread;

		Traffic(String ip, RedisCluster.Node master) {
			this.ip = ip;
			this.master = master;
			this.thread = new Thread(this::send, "traffic " + ip);
			this.thread.setDaemon(true);
		}

		void start() {
			this.thread.start();
		}

		void stop() throws InterruptedException {
			this.stopped.set(true);
			this.thread.join(Duration.ofSeconds(20).toMillis());
		}

		private void send() {
			while (!this.stopped.get()) {
				EntityExchangeResult<byte[]> result = RedisClusterPausedMasterRoutesIntegrationTest.this.client.get()
					.uri("/late/x")
					.header("X-Forwarded-For", this.ip)
					.exchange()
					.expectBody()
					.returnResult();
				int status = result.getStatus().value();
				boolean fields = result.getResponseHeaders().getFirst("RateLimit") != null;
				(status != 200 ? this.other : fields ? this.fromRedis : this.withoutRedis).incrementAndGet();
			}
		}

		@Override
		public String toString() {
			return this.ip + "@" + this.master.port() + Map.of("fromRedis", this.fromRedis.get(), "withoutRedis",
					this.withoutRedis.get(), "other", this.other.get());
		}

	}

}
