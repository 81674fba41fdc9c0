package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.plan.ApiKey;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.limits.ScopedLimits;
import io.github.ratelimit.gateway.chain.ScopedRateLimiter;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.plan.CachingPlanResolver;
import io.github.ratelimit.gateway.plan.PlanStore;
import io.github.ratelimit.test.redis.RedisCluster;
import io.lettuce.core.cluster.ClusterClientOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The token bucket script and the plan store on a real three-master Redis Cluster, through Spring Data Redis and
 * Lettuce in cluster mode: one slot per script call (no CROSSSLOT, even with several limits), EVALSHA with EVAL
 * on NOSCRIPT on whichever master owns the slot, and buckets spread over every master.
 */
class RedisRateLimitStoreClusterTest {

	private static final long HOUR_MICROS = 3_600_000_000L;

	private static RedisCluster cluster;

	private static LettuceConnectionFactory connectionFactory;

	private static RedisRateLimitStore templateLimiter;

	private static RedisRateLimitStore lettuceLimiter;

	private static ReactiveStringRedisTemplate redis;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start();
		RedisClusterConfiguration configuration = new RedisClusterConfiguration(
				Arrays.asList(cluster.nodeAddresses().split(",")));
		ClusterClientOptions options = ClusterClientOptions.builder()
			.topologyRefreshOptions(new ClusterTopologyRefreshCustomizer(Duration.ofSeconds(30), true, true)
				.refreshOptions())
			.build();
		connectionFactory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().clientOptions(options).commandTimeout(Duration.ofSeconds(2)).build());
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		redis = new ReactiveStringRedisTemplate(connectionFactory);
		templateLimiter = new RedisRateLimitStore(new SpringDataScriptExecutor(connectionFactory), new BucketKeys("rl"));
		lettuceLimiter = new RedisRateLimitStore(new LettuceScriptExecutor(connectionFactory), new BucketKeys("rl"));
	}

	private static RedisRateLimitStore limiter(String path) {
		return "lettuce".equals(path) ? lettuceLimiter : templateLimiter;
	}

	@AfterAll
	static void stopCluster() {
		if (lettuceLimiter != null) {
			lettuceLimiter.destroy();
		}
		if (connectionFactory != null) {
			connectionFactory.destroy();
		}
		if (cluster != null) {
			cluster.close();
		}
	}

	@BeforeEach
	void flush() {
		cluster.flushAll(); // also empties every node's script cache: the first EVALSHA on each master is NOSCRIPT
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void fiveConcurrentRequestsAgainstCapacityTwoAllowTwoAndDenyThree(String path) {
		// the case of a public bug report: capacity 2, refill 1/s, 5 requests at t=0 for one key
		PlanLimits limits = new PlanLimits("free", "burst",
				List.of(new LimitDefinition("free-burst", 2, 1, Duration.ofSeconds(1))));
		ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, "one-key", "free");
		List<RateLimitDecision> decisions = Flux.range(0, 5)
			.flatMap((i) -> Mono.fromFuture(() -> limiter(path).tryConsume(client, limits, 1)), 5)
			.collectList()
			.block(Duration.ofSeconds(10));
		assertThat(decisions).hasSize(5);
		assertThat(decisions.stream().filter(RateLimitDecision::allowed)).hasSize(2);
		assertThat(decisions.stream().filter((d) -> !d.allowed())).hasSize(3);
		assertThat(decisions).flatMap(RateLimitDecision::statuses)
			.extracting(LimitStatus::remaining)
			.allSatisfy((remaining) -> assertThat(remaining).isBetween(0L, 2L));
		assertThat(decisions.stream().filter((d) -> !d.allowed()))
			.allSatisfy((d) -> assertThat(d.retryAfterMillis()).isBetween(1L, 1000L));
		// the bucket lives on the master owning the client's slot, and only there
		String key = new BucketKeys("rl").keysFor(client, limits).get(0);
		assertThat(StoredTokens.of(cluster.masterOf(key)::command, key, 2, 1, 1_000_000)).isBetween(0.0, 1.0);
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void clientsSpreadOverEveryMasterAndEachMasterLoadsTheScriptOnNoscript(String path) {
		PlanLimits limits = new PlanLimits("free", "api",
				List.of(new LimitDefinition("free-api-1h", 20, 20, Duration.ofHours(1)),
						new LimitDefinition("free-api-1d", 10_000, 10_000, Duration.ofDays(1))));
		List<RateLimitDecision> decisions = Flux.range(0, 300)
			.flatMap((i) -> Mono.fromFuture(() -> limiter(path)
				.tryConsume(new ClientKey(ClientKey.Kind.API_KEY, "client-" + i, "free"), limits, 1)),
					32)
			.collectList()
			.block(Duration.ofSeconds(20));
		// two limits per client: two keys of one slot per script call, never CROSSSLOT
		assertThat(decisions).hasSize(300).allMatch(RateLimitDecision::allowed);
		Map<RedisCluster.Node, Long> keys = cluster.keysPerMaster();
		assertThat(keys).hasSize(3);
		assertThat(keys.values()).allSatisfy((count) -> assertThat(count).isGreaterThan(100));
		assertThat(keys.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(600);
		// every master answered NOSCRIPT once and then loaded the script through EVAL
		String sha = RedisRateLimitStore.rateLimitScript().getSha1();
		for (RedisCluster.Node master : cluster.masters()) {
			assertThat(master.command("SCRIPT", "EXISTS", sha)).isEqualTo("1");
		}
		// both buckets of a client are in the slot of its hash tag
		Set<Integer> slots = new HashSet<>();
		for (String key : new BucketKeys("rl").keysFor(new ClientKey(ClientKey.Kind.API_KEY, "client-7", "free"),
				limits)) {
			slots.add(cluster.slotOf(key));
		}
		assertThat(slots).hasSize(1);
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "template" })
	void globalLimitsLiveInTheGroupsSlotAndStayAllOrNothingAcrossSlots(String path) {
		ScopedRateLimiter scoped = new ScopedRateLimiter(limiter(path));
		PlanLimits limits = new PlanLimits("free", "search",
				List.of(new LimitDefinition("free-search", 2, 1, Duration.ofHours(1)), new LimitDefinition("search-global", 3,
						1, Duration.ofHours(1), Algorithm.TOKEN_BUCKET, LimitScope.GLOBAL)));
		ScopedLimits split = limits.scoped();
		BucketKeys keys = new BucketKeys("rl");
		String globalKey = keys.keysFor(ClientKey.everyone("free"), split.global()).get(0);
		assertThat(globalKey).isEqualTo("rl:{search|g:all}:0");
		ClientKey alice = new ClientKey(ClientKey.Kind.API_KEY, "alice", "free");
		ClientKey bob = new ClientKey(ClientKey.Kind.API_KEY, "bob", "free");
		String aliceKey = keys.keysFor(alice, split.client()).get(0);
		String bobKey = keys.keysFor(bob, split.client()).get(0);
		assertThat(cluster.slotOf(aliceKey)).isNotEqualTo(cluster.slotOf(globalKey));
		assertThat(cluster.slotOf(bobKey)).isNotEqualTo(cluster.slotOf(globalKey));
		// shared across clients: alice 2, bob 1, then the group's bucket is empty
		assertThat(scoped.tryConsume(alice, limits, 1).orTimeout(30, TimeUnit.SECONDS).join().allowed()).isTrue();
		assertThat(scoped.tryConsume(alice, limits, 1).orTimeout(30, TimeUnit.SECONDS).join().allowed()).isTrue();
		assertThat(scoped.tryConsume(bob, limits, 1).orTimeout(30, TimeUnit.SECONDS).join().allowed()).isTrue();
		RateLimitDecision denied = scoped.tryConsume(bob, limits, 1).orTimeout(30, TimeUnit.SECONDS).join();
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("search-global");
		// compensated on the master owning bob's slot: his own bucket holds its 1 token again
		assertThat(StoredTokens.of(cluster.masterOf(bobKey)::command, bobKey, 2, 1, HOUR_MICROS)).isBetween(1.0, 1.01);
		assertThat(StoredTokens.of(cluster.masterOf(globalKey)::command, globalKey, 3, 1, HOUR_MICROS))
			.isBetween(0.0, 0.01);
		// a client denied by its own limit leaves the group's bucket alone
		assertThat(scoped.tryConsume(alice, limits, 1).orTimeout(30, TimeUnit.SECONDS).join().violated())
			.extracting((s) -> s.limit().policyName())
			.containsExactly("free-search");
	}

	@Test
	void planLookupsWorkAcrossTheCluster() {
		RedisPlanStore store = new RedisPlanStore(redis, RedisPlanStore.DEFAULT_KEY_PREFIX);
		Set<RedisCluster.Node> owners = new HashSet<>();
		for (int i = 0; i < 30; i++) {
			String planKey = RedisPlanStore.planKey(RedisPlanStore.DEFAULT_KEY_PREFIX, "api-key-" + i);
			RedisCluster.Node owner = cluster.masterOf(planKey);
			owners.add(owner);
			owner.command("SET", planKey, (i % 2 == 0) ? "free" : "pro");
		}
		assertThat(owners).as("plan keys carry no hash tag: they spread").hasSize(3);
		CachingPlanResolver resolver = new CachingPlanResolver(store, Set.of("free", "pro"),
				new CachingPlanResolver.Settings(1000, Duration.ofMinutes(5), Duration.ofSeconds(30),
						Duration.ofHours(1), Duration.ofSeconds(2), 0));
		for (int i = 0; i < 30; i++) {
			assertThat(resolver.resolvePlan(ApiKey.of("api-key-" + i)).toCompletableFuture().join()).contains((i % 2 == 0) ? "free" : "pro");
		}
		assertThat(resolver.resolvePlan(ApiKey.of("not-provisioned")).toCompletableFuture().join()).isEmpty();
		assertThat(store.findPlan(PlanStore.keyHash("api-key-1")).toCompletableFuture().join()).contains("pro");
	}

}
