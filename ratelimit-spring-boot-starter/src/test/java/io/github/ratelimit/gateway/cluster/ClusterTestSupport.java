package io.github.ratelimit.gateway.cluster;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.github.ratelimit.test.redis.RedisCluster;

/** Helpers for the Redis Cluster route tests. */
final class ClusterTestSupport {

	private ClusterTestSupport() {
	}

	/** Provisions an API key the way the provisioning side does: one SET on the master owning the plan key. */
	static void provision(RedisCluster cluster, String apiKey, String plan) {
		String planKey = RedisPlanStore.planKey(RedisPlanStore.DEFAULT_KEY_PREFIX, apiKey);
		cluster.masterOf(planKey).command("SET", planKey, plan);
	}

	/** The Redis key of the (single) bucket of an API key client in an endpoint group. */
	static String bucketKey(String apiKey, String plan, String group) {
		PlanLimits oneLimit = new PlanLimits(plan, group, List.of(new LimitDefinition("x", 1, 1, Duration.ofSeconds(1))));
		return new BucketKeys("rl").keysFor(new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(apiKey), plan),
				oneLimit).get(0);
	}

}
