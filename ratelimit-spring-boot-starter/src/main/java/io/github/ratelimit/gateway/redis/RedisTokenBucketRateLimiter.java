package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.key.ClientKey;
import io.github.ratelimit.gateway.limit.BucketLimit;
import io.github.ratelimit.gateway.limit.PlanLimits;
import io.github.ratelimit.gateway.limiter.ClientRateLimiter;
import io.github.ratelimit.gateway.limiter.LimitStatus;
import io.github.ratelimit.gateway.limiter.RateLimitDecision;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@link ClientRateLimiter} keeping token buckets in Redis, updated by one atomic Lua script
 * ({@value #SCRIPT_LOCATION}) per request. The script runs with EVALSHA and falls back to EVAL when Redis answers
 * NOSCRIPT (e.g. after a restart), through Spring Data Redis.
 */
public class RedisTokenBucketRateLimiter implements ClientRateLimiter {

	/** Class path location of the token bucket script. */
	public static final String SCRIPT_LOCATION = "META-INF/ratelimit/token_bucket.lua";

	private static final RedisScript<Long> REFUND_SCRIPT = RedisScript
		.of(new ClassPathResource("META-INF/ratelimit/token_bucket_refund.lua"), Long.class);

	private final ReactiveStringRedisTemplate redis;

	private final RedisScript<List<Long>> script;

	private final BucketKeys keys;

	private final Map<PlanLimits, List<String>> argumentsCache = new ConcurrentHashMap<>();

	private volatile boolean connected;

	/**
	 * Create a limiter.
	 * @param redis the template used to run the script
	 * @param script the token bucket script, see {@link #tokenBucketScript()}
	 * @param keys names the bucket keys
	 */
	public RedisTokenBucketRateLimiter(ReactiveStringRedisTemplate redis, RedisScript<List<Long>> script,
			BucketKeys keys) {
		this.redis = redis;
		this.script = script;
		this.keys = keys;
	}

	/**
	 * Load the token bucket script from the class path.
	 * @return the script, returning a flat list of integers
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	public static RedisScript<List<Long>> tokenBucketScript() {
		return (RedisScript) RedisScript.of(new ClassPathResource(SCRIPT_LOCATION), List.class);
	}

	@Override
	public Mono<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost) {
		List<String> bucketKeys = this.keys.keysFor(client, limits);
		List<String> arguments = new ArrayList<>(arguments(limits));
		arguments.set(0, Long.toString(cost));
		Mono<RateLimitDecision> call = this.redis.execute(this.script, bucketKeys, arguments)
			.next()
			.map((reply) -> toDecision(limits, reply))
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("Empty reply from the rate limit script")));
		if (this.connected) {
			return call;
		}
		// Until a first call succeeds, the shared Lettuce connection may still have to be opened, which Spring
		// Data Redis does synchronously on the subscribing thread: keep that off the request's event loop, so
		// the caller's timeout bounds the wait. Once connected, Lettuce reconnects in the background.
		return call.subscribeOn(Schedulers.boundedElastic()).doOnSuccess((decision) -> this.connected = true);
	}

	@Override
	public Mono<Void> refund(ClientKey client, PlanLimits limits, long cost) {
		List<String> arguments = new ArrayList<>(arguments(limits));
		arguments.set(0, Long.toString(cost));
		return this.redis.execute(REFUND_SCRIPT, this.keys.keysFor(client, limits), arguments).then();
	}

	@Override
	public Mono<Long> reset(ClientKey client, PlanLimits limits) {
		// all of one client's keys in a group share a hash tag, so one DEL works on a Redis Cluster too
		return this.redis.delete(this.keys.keysFor(client, limits).toArray(String[]::new));
	}

	private List<String> arguments(PlanLimits limits) {
		return this.argumentsCache.computeIfAbsent(limits, (l) -> {
			List<String> args = new ArrayList<>(2 + 3 * l.limits().size());
			args.add("1");
			args.add(Integer.toString(l.limits().size()));
			for (BucketLimit limit : l.limits()) {
				args.add(Long.toString(limit.capacity()));
				args.add(Long.toString(limit.refillTokens()));
				args.add(Long.toString(limit.refillPeriodMicros()));
			}
			return List.copyOf(args);
		});
	}

	private static RateLimitDecision toDecision(PlanLimits limits, List<Long> reply) {
		int count = limits.limits().size();
		if (reply.size() != 1 + 4 * count) {
			throw new IllegalStateException("Unexpected reply from the rate limit script: " + reply);
		}
		List<LimitStatus> statuses = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			int at = 1 + 4 * i;
			statuses.add(new LimitStatus(limits.limits().get(i), reply.get(at) == 1L, reply.get(at + 1),
					reply.get(at + 2), reply.get(at + 3)));
		}
		return RateLimitDecision.shared(limits, reply.get(0) == 1L, statuses);
	}

	@Override
	public String toString() {
		return "RedisTokenBucketRateLimiter[" + SCRIPT_LOCATION + "]";
	}

}
