package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.key.ClientKey;
import io.github.ratelimit.gateway.limit.Algorithm;
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
 * {@link ClientRateLimiter} keeping every limit's state in Redis (token bucket, sliding window log, sliding window
 * counter or fixed window, per {@link BucketLimit#algorithm()}), checked and updated by one atomic Lua script
 * ({@value #SCRIPT_LOCATION}) per request, whatever mix of algorithms the request's limits use. The script runs with
 * EVALSHA and falls back to EVAL when Redis answers NOSCRIPT (e.g. after a restart), through Spring Data Redis.
 *
 * <p>Script arguments (see the script's header): {@code KEYS} = one key per limit ({@link BucketKeys});
 * {@code ARGV} = cost, limit count n, then capacity, refill tokens and refill period (microseconds) per limit, then
 * the {@linkplain Algorithm#scriptCode() algorithm code} of each limit. The refund script
 * ({@value #REFUND_SCRIPT_LOCATION}) takes the same arguments.
 */
public class RedisTokenBucketRateLimiter implements ClientRateLimiter {

	/** Class path location of the rate limit script (every algorithm). */
	public static final String SCRIPT_LOCATION = "META-INF/ratelimit/rate_limit.lua";

	/** Class path location of the script giving back the tokens of an abandoned check. */
	public static final String REFUND_SCRIPT_LOCATION = "META-INF/ratelimit/rate_limit_refund.lua";

	private static final RedisScript<Long> REFUND_SCRIPT = RedisScript
		.of(new ClassPathResource(REFUND_SCRIPT_LOCATION), Long.class);

	private final ReactiveStringRedisTemplate redis;

	private final RedisScript<List<Long>> script;

	private final BucketKeys keys;

	private final Map<PlanLimits, List<String>> argumentsCache = new ConcurrentHashMap<>();

	private volatile boolean connected;

	/**
	 * Create a limiter.
	 * @param redis the template used to run the script
	 * @param script the rate limit script, see {@link #tokenBucketScript()}
	 * @param keys names the bucket keys
	 */
	public RedisTokenBucketRateLimiter(ReactiveStringRedisTemplate redis, RedisScript<List<Long>> script,
			BucketKeys keys) {
		this.redis = redis;
		this.script = script;
		this.keys = keys;
	}

	/**
	 * Load the rate limit script from the class path. (The name predates the window algorithms: the script runs
	 * every {@link Algorithm}.)
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
		return this.argumentsCache.computeIfAbsent(limits, RedisTokenBucketRateLimiter::scriptArguments);
	}

	/**
	 * The script's {@code ARGV} for some limits, at cost 1: cost, limit count n, capacity, refill tokens and refill
	 * period in microseconds per limit, then each limit's algorithm code.
	 * @param limits the limits
	 * @return the arguments, in order
	 */
	public static List<String> scriptArguments(PlanLimits limits) {
		List<BucketLimit> list = limits.limits();
		List<String> args = new ArrayList<>(2 + 4 * list.size());
		args.add("1");
		args.add(Integer.toString(list.size()));
		for (BucketLimit limit : list) {
			args.add(Long.toString(limit.capacity()));
			args.add(Long.toString(limit.refillTokens()));
			args.add(Long.toString(limit.refillPeriodMicros()));
		}
		for (BucketLimit limit : list) {
			args.add(limit.algorithm().scriptCode());
		}
		return List.copyOf(args);
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
