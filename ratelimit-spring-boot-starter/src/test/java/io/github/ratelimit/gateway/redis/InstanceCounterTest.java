package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.test.redis.RedisCluster;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TcpProxy;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.util.ReflectionTestUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Instances learn how many of them share the limits, from heartbeats in a real Redis. */
@ExtendWith(RedisExtension.class)
class InstanceCounterTest {

	@Test
	void instancesCountEachOtherAndKeepTheLastCount(TestRedis redis) {
		LettuceConnectionFactory factory = StartedConnectionFactory.to(redis.host(), redis.port());
		InstanceCounter a = new InstanceCounter(new LettuceScriptExecutor(factory), "ic", 7, true,
				Duration.ofSeconds(5));
		InstanceCounter b = new InstanceCounter(new LettuceScriptExecutor(factory), "ic", 7, true,
				Duration.ofSeconds(5));
		try {
			assertThat(a.instances()).isEqualTo(7); // configured, nothing learned yet
			assertThat(a.isLearned()).isFalse();
			assertThat(a.beat().join()).isEqualTo(1);
			assertThat(b.beat().join()).isEqualTo(2);
			assertThat(a.beat().join()).isEqualTo(2);
			assertThat(a.instances()).isEqualTo(2);
			assertThat(a.isLearned()).isTrue();
			long ttl = Long.parseLong(redis.command("PTTL", "ic:instances"));
			assertThat(ttl).isPositive().isLessThanOrEqualTo(15_000);
		}
		finally {
			a.close();
			b.close();
			factory.destroy();
		}
	}

	/**
	 * The first heartbeat goes at once (the interval is a minute), from a daemon thread of the counter's own; stop
	 * withdraws the instance and ends that thread.
	 */
	@Test
	void startSendsAHeartbeatAtOnceAndStopWithdrawsTheInstance(TestRedis redis) {
		LettuceConnectionFactory factory = StartedConnectionFactory.to(redis.host(), redis.port());
		InstanceCounter counter = new InstanceCounter(new LettuceScriptExecutor(factory), "ic-start", 7, true,
				Duration.ofMinutes(1));
		try {
			counter.start();
			assertThat(counter.isRunning()).isTrue();
			ExecutorService heartbeat = (ExecutorService) ReflectionTestUtils.getField(counter, "heartbeat");
			await().atMost(Duration.ofSeconds(20)).until(counter::isLearned);
			assertThat(counter.instances()).isEqualTo(1);
			assertThat(redis.command("ZCARD", "ic-start:instances")).isEqualTo("1");
			assertThat(Thread.getAllStackTraces().keySet())
				.filteredOn((thread) -> thread.getName().equals("ratelimit-heartbeat"))
				.isNotEmpty()
				.allMatch(Thread::isDaemon);

			counter.stop();
			assertThat(counter.isRunning()).isFalse();
			assertThat(heartbeat.isTerminated()).isTrue();
			assertThat(redis.command("ZCARD", "ic-start:instances")).isEqualTo("0");
			assertThat(counter.instances()).as("the last count learned is kept").isEqualTo(1);
		}
		finally {
			counter.stop();
			counter.close();
			factory.destroy();
		}
	}

	/**
	 * Stopped while its first heartbeat is still unanswered (Redis' replies delayed by a second): the heartbeat has
	 * reached Redis, and so does the withdrawal after it.
	 */
	@Test
	void stopWithdrawsAnInstanceWhoseHeartbeatIsStillUnanswered(TestRedis redis) {
		try (TcpProxy network = TcpProxy.start(redis.host(), redis.port())) {
			LettuceConnectionFactory factory = StartedConnectionFactory.to(network.host(), network.port());
			LettuceScriptExecutor executor = new LettuceScriptExecutor(factory);
			InstanceCounter counter = new InstanceCounter(executor, "ic-unanswered", 7, true, Duration.ofMinutes(1));
			try {
				// the connection open and the script loaded, so that the heartbeat is one EVALSHA on an open connection
				executor.eval(LuaScript.fromClassPath("META-INF/ratelimit/instances.lua"),
						new byte[][] { "ic-warm:instances".getBytes(StandardCharsets.UTF_8) },
						new byte[][] { "warm".getBytes(StandardCharsets.UTF_8), "1000".getBytes(StandardCharsets.UTF_8) })
					.join();
				network.delay(Duration.ofSeconds(1));
				counter.start();
				await().atMost(Duration.ofSeconds(10)).until(() -> lastHeartbeat(counter) != null);
				counter.stop();
				assertThat(counter.isLearned()).isFalse();
				// if the withdrawal were not sent, the heartbeat would keep the instance for 3 minutes
				await().atMost(Duration.ofSeconds(10))
					.during(Duration.ofMillis(1500))
					.until(() -> redis.command("ZCARD", "ic-unanswered:instances").equals("0"));
			}
			finally {
				counter.stop();
				counter.close();
				factory.destroy();
			}
		}
	}

	/**
	 * Redis goes silent after the count was learned: a heartbeat still unanswered when the next is due fails, the
	 * next is sent, the count learned is kept, and stop gives up the withdrawal after about a second.
	 */
	@Test
	void aHeartbeatRedisDoesNotAnswerFailsWhenTheNextIsDueAndStopDoesNotWaitForRedis(TestRedis redis) {
		Duration interval = Duration.ofMillis(200);
		try (TcpProxy network = TcpProxy.start(redis.host(), redis.port())) {
			LettuceConnectionFactory factory = StartedConnectionFactory.to(network.host(), network.port());
			InstanceCounter counter = new InstanceCounter(new LettuceScriptExecutor(factory), "ic-silent", 7, true,
					interval);
			try {
				counter.start();
				await().atMost(Duration.ofSeconds(20)).until(counter::isLearned);
				network.blackhole();
				// heartbeats go on being sent, each failed when the next is due
				Set<CompletableFuture<?>> sent = ConcurrentHashMap.newKeySet();
				await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
					sent.add(lastHeartbeat(counter));
					return sent.stream().filter(InstanceCounterTest::timedOut).count() >= 3;
				});
				assertThat(counter.instances()).as("the last count learned is kept").isEqualTo(1);

				long start = System.nanoTime();
				counter.stop();
				long stopMillis = (System.nanoTime() - start) / 1_000_000;
				// the withdrawal's 1 s, generous for a loaded machine; Lettuce's own timeout (60 s) would outlive it
				assertThat(stopMillis).as("stop took %d ms", stopMillis).isLessThan(5_000);
				assertThat(counter.isRunning()).isFalse();
			}
			finally {
				counter.stop();
				counter.close();
				factory.destroy();
			}
		}
	}

	/**
	 * On a Redis Cluster whose master holding the instances key dies: heartbeats fail (each given up when the next is
	 * due), the count learned is kept, a counter started meanwhile starts, and both stop within seconds.
	 */
	@Test
	void theMasterOfTheInstancesKeyDownOnlyMakesHeartbeatsFail() {
		Duration interval = Duration.ofMillis(200);
		try (RedisCluster cluster = RedisCluster.start(3, 0, RedisCluster.DEFAULT_NODE_TIMEOUT, false)) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisClusterConfiguration(List.of(cluster.nodeAddresses().split(","))));
			factory.afterPropertiesSet();
			factory.start();
			InstanceCounter before = new InstanceCounter(new LettuceScriptExecutor(factory), "ic-cluster", 7, true,
					interval);
			InstanceCounter during = new InstanceCounter(new LettuceScriptExecutor(factory), "ic-cluster", 7, true,
					interval);
			try {
				before.start();
				await().atMost(Duration.ofSeconds(20)).until(before::isLearned);
				cluster.kill(cluster.masterOf("ic-cluster:instances"));
				long start = System.nanoTime();
				during.start();
				assertThat(during.isRunning()).isTrue();
				assertThat((System.nanoTime() - start) / 1_000_000).as("start took ms").isLessThan(5_000);
				Set<CompletableFuture<?>> sent = ConcurrentHashMap.newKeySet();
				await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
					sent.add(lastHeartbeat(before));
					sent.add(lastHeartbeat(during));
					return sent.stream().filter(CompletableFuture::isCompletedExceptionally).count() >= 6;
				});
				assertThat(before.instances()).as("the last count learned is kept").isEqualTo(1);
				assertThat(during.isLearned()).isFalse();
				for (InstanceCounter counter : List.of(before, during)) {
					start = System.nanoTime();
					counter.stop();
					long stopMillis = (System.nanoTime() - start) / 1_000_000;
					assertThat(stopMillis).as("stop took %d ms", stopMillis).isLessThan(5_000);
					assertThat(counter.isRunning()).isFalse();
				}
			}
			finally {
				before.stop();
				during.stop();
				before.close();
				during.close();
				factory.destroy();
			}
		}
	}

	private static CompletableFuture<?> lastHeartbeat(InstanceCounter counter) {
		return (CompletableFuture<?>) ReflectionTestUtils.getField(counter, "lastHeartbeat");
	}

	private static boolean timedOut(CompletableFuture<?> heartbeat) {
		return heartbeat.isDone() && heartbeat.handle((count, ex) -> ex).join() instanceof TimeoutException;
	}

}
