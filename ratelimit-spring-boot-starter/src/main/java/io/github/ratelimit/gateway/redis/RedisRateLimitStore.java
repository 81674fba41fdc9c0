package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.chain.ClientRateLimiter;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@link ClientRateLimiter} keeping every limit's state in Redis (token bucket, sliding window log, sliding window
 * counter or fixed window, per {@link LimitDefinition#algorithm()}), checked and updated by one atomic Lua script
 * ({@value #SCRIPT_LOCATION}) per request, whatever mix of algorithms the request's limits use. The script runs with
 * EVALSHA and falls back to EVAL when Redis answers NOSCRIPT (e.g. after a restart or a failover).
 *
 * <p>Two ways to reach Redis:
 * <ul>
 * <li>{@linkplain #RedisRateLimitStore(LettuceConnectionFactory, RedisScript, BucketKeys) Lettuce directly}
 * (what the auto-configuration uses with Boot's Lettuce connection factory): one connection of its own, opened from
 * the factory's Lettuce client (so with its address, credentials, TLS, client options and, on a Cluster, its
 * topology), shared by every check with Lettuce's automatic pipelining; arguments are pre-encoded bytes per set of
 * limits, and a check is one future with no reactive pipeline ({@link LettuceScriptConnection});</li>
 * <li>{@linkplain #RedisRateLimitStore(ReactiveStringRedisTemplate, RedisScript, BucketKeys) through Spring
 * Data Redis' reactive template} (any reactive connection factory).</li>
 * </ul>
 *
 * <p>Script arguments (see the script's header): {@code KEYS} = one key per limit ({@link BucketKeys});
 * {@code ARGV} = cost, limit count n, then capacity, refill tokens and refill period (microseconds) per limit, then
 * the {@linkplain Algorithm#scriptCode() algorithm code} of each limit. The refund script
 * ({@value #REFUND_SCRIPT_LOCATION}) takes the same arguments.
 */
public class RedisRateLimitStore implements ClientRateLimiter, SmartLifecycle, DisposableBean {

	/** Class path location of the rate limit script (every algorithm). */
	public static final String SCRIPT_LOCATION = "META-INF/ratelimit/rate_limit.lua";

	/** Class path location of the script giving back the tokens of an abandoned check. */
	public static final String REFUND_SCRIPT_LOCATION = "META-INF/ratelimit/rate_limit_refund.lua";

	private static final RedisScript<Long> REFUND_SCRIPT = RedisScript
		.of(new ClassPathResource(REFUND_SCRIPT_LOCATION), Long.class);

	/** The refund script with its text in memory (no modification check per call). */
	private static final RedisScript<Long> REFUND_SCRIPT_TEXT = RedisScript.of(REFUND_SCRIPT.getScriptAsString(),
			Long.class);

	private final ReactiveStringRedisTemplate redis;

	private final LettuceScriptConnection lettuce;

	private final RedisScript<List<Long>> script;

	private final LettuceScriptConnection.Script lettuceScript;

	private final LettuceScriptConnection.Script lettuceRefundScript;

	private final BucketKeys keys;

	private final Map<PlanLimits, Arguments> argumentsCache = new ConcurrentHashMap<>();

	/** The arguments used last: most gateways check one or two sets of limits over and over. */
	private volatile Arguments lastArguments;

	private volatile boolean connected;

	/** Stopped and started right after the connection factory: its stop shuts the Lettuce client down. */
	private final int phase;

	private volatile boolean running;

	/**
	 * Create a limiter that runs the script through Spring Data Redis' reactive template.
	 * @param redis the template used to run the script
	 * @param script the rate limit script, see {@link #tokenBucketScript()}
	 * @param keys names the bucket keys
	 */
	public RedisRateLimitStore(ReactiveStringRedisTemplate redis, RedisScript<List<Long>> script,
			BucketKeys keys) {
		this.redis = redis;
		this.lettuce = null;
		// the same script with its text held in memory: a class path script is re-checked for modification (a
		// file stat) and its SHA-1 read under a lock on every call otherwise
		this.script = RedisScript.of(script.getScriptAsString(), script.getResultType());
		this.lettuceScript = null;
		this.lettuceRefundScript = null;
		this.keys = keys;
		this.phase = 0;
	}

	/**
	 * Create a limiter that runs the script on a Lettuce connection of its own, opened from the factory's Lettuce
	 * client in the background right away (and, if Redis is down then, by the first check after it is up; never on
	 * the caller's thread). Closed with this bean.
	 * @param connectionFactory Boot's (or the application's) Lettuce connection factory
	 * @param script the rate limit script, see {@link #tokenBucketScript()}
	 * @param keys names the bucket keys
	 */
	public RedisRateLimitStore(LettuceConnectionFactory connectionFactory, RedisScript<List<Long>> script,
			BucketKeys keys) {
		this.redis = null;
		this.lettuce = new LettuceScriptConnection(connectionFactory);
		this.script = script;
		this.lettuceScript = LettuceScriptConnection.Script.of(script);
		this.lettuceRefundScript = LettuceScriptConnection.Script.of(REFUND_SCRIPT);
		this.keys = keys;
		this.phase = (connectionFactory.getPhase() < Integer.MAX_VALUE) ? connectionFactory.getPhase() + 1
				: Integer.MAX_VALUE;
		this.lettuce.connectInBackground();
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

	/**
	 * {@inheritDoc}
	 * <p>On the Lettuce connection: one EVALSHA (EVAL after NOSCRIPT), completed on Lettuce's I/O thread.
	 */
	@Override
	public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, long cost) {
		if (this.lettuce != null) {
			Arguments arguments = arguments(limits);
			return this.lettuce
				.evalsha(this.lettuceScript, arguments.keys(this.keys, client, limits), arguments.bytes(cost))
				.thenApply((reply) -> toDecision(limits, reply));
		}
		List<String> bucketKeys = this.keys.keysFor(client, limits);
		Mono<RateLimitDecision> call = this.redis.execute(this.script, bucketKeys, arguments(limits).strings(cost))
			.next()
			.map((reply) -> toDecision(limits, reply))
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("Empty reply from the rate limit script")));
		if (this.connected) {
			return call.toFuture();
		}
		// Until a first call succeeds, the shared Lettuce connection may still have to be opened, which Spring
		// Data Redis does synchronously on the subscribing thread: keep that off the request's event loop, so
		// the caller's timeout bounds the wait. Once connected, Lettuce reconnects in the background.
		return call.subscribeOn(Schedulers.boundedElastic()).doOnSuccess((decision) -> this.connected = true).toFuture();
	}

	@Override
	public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, long cost) {
		Arguments arguments = arguments(limits);
		if (this.lettuce != null) {
			return this.lettuce
				.evalsha(this.lettuceRefundScript, arguments.keys(this.keys, client, limits), arguments.bytes(cost))
				.thenApply((reply) -> null);
		}
		return this.redis.execute(REFUND_SCRIPT_TEXT, this.keys.keysFor(client, limits), arguments.strings(cost))
			.then()
			.toFuture();
	}

	@Override
	public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
		// all of one client's keys in a group share a hash tag, so one DEL works on a Redis Cluster too
		if (this.lettuce != null) {
			return this.lettuce.del(arguments(limits).keys(this.keys, client, limits));
		}
		return this.redis.delete(this.keys.keysFor(client, limits).toArray(String[]::new)).toFuture();
	}

	/**
	 * Open the limiter's own Lettuce connection again (in the background) after {@link #stop()}: when the context is
	 * started again (e.g. a paused test context, or a checkpoint and restore), after the connection factory, whose
	 * start creates a new Lettuce client.
	 */
	@Override
	public void start() {
		this.running = true;
		if (this.lettuce != null) {
			this.lettuce.connectInBackground();
		}
	}

	/**
	 * Close the limiter's own Lettuce connection before the connection factory stops (which shuts its client down,
	 * closing every connection for good); {@link #start()} opens a new one.
	 */
	@Override
	public void stop() {
		this.running = false;
		if (this.lettuce != null) {
			this.lettuce.suspend();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return this.phase;
	}

	/** Closes the Lettuce connection, if this limiter opened one. */
	@Override
	public void destroy() {
		if (this.lettuce != null) {
			this.lettuce.close();
		}
	}

	private Arguments arguments(PlanLimits limits) {
		Arguments last = this.lastArguments;
		if (last != null && last.limits == limits) {
			return last;
		}
		Arguments arguments = this.argumentsCache.computeIfAbsent(limits, Arguments::new);
		this.lastArguments = arguments;
		return arguments;
	}

	/**
	 * The script's {@code ARGV} for some limits, at cost 1: cost, limit count n, capacity, refill tokens and refill
	 * period in microseconds per limit, then each limit's algorithm code.
	 * @param limits the limits
	 * @return the arguments, in order
	 */
	public static List<String> scriptArguments(PlanLimits limits) {
		List<LimitDefinition> list = limits.limits();
		List<String> args = new ArrayList<>(2 + 4 * list.size());
		args.add("1");
		args.add(Integer.toString(list.size()));
		for (LimitDefinition limit : list) {
			args.add(Long.toString(limit.capacity()));
			args.add(Long.toString(limit.refillTokens()));
			args.add(Long.toString(limit.refillPeriodMicros()));
		}
		for (LimitDefinition limit : list) {
			args.add(limit.algorithm().scriptCode());
		}
		return List.copyOf(args);
	}

	private static RateLimitDecision toDecision(PlanLimits limits, List<?> reply) {
		int count = limits.limits().size();
		if (reply == null || reply.size() != 1 + 4 * count) {
			throw new CompletionException(
					new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
		}
		List<LimitStatus> statuses = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			int at = 1 + 4 * i;
			statuses.add(new LimitStatus(limits.limits().get(i), number(reply, at) == 1L, number(reply, at + 1),
					number(reply, at + 2), number(reply, at + 3)));
		}
		return RateLimitDecision.shared(limits, number(reply, 0) == 1L, statuses);
	}

	private static long number(List<?> reply, int index) {
		Object value = reply.get(index);
		if (value instanceof Long number) {
			return number;
		}
		throw new CompletionException(
				new IllegalStateException("Unexpected reply from the rate limit script: " + reply));
	}

	@Override
	public String toString() {
		return "RedisRateLimitStore[" + SCRIPT_LOCATION + ((this.lettuce != null) ? ", lettuce" : ", template")
				+ "]";
	}

	/**
	 * A set of limits' script arguments, encoded once: as strings for the template, as bytes (cost 1) for Lettuce.
	 * Keys are built per client; the part after the client id (":0", ":1:swl", ...) is encoded once.
	 */
	private static final class Arguments {

		private static final byte[] ONE = { '1' };

		final PlanLimits limits;

		private final List<String> strings;

		private final byte[][] bytes;

		private final byte[][] keySuffixes;

		Arguments(PlanLimits limits) {
			this.limits = limits;
			this.strings = scriptArguments(limits);
			this.bytes = new byte[this.strings.size()][];
			for (int i = 0; i < this.bytes.length; i++) {
				this.bytes[i] = this.strings.get(i).getBytes(StandardCharsets.UTF_8);
			}
			int count = limits.limits().size();
			this.keySuffixes = new byte[count][];
			for (int i = 0; i < count; i++) {
				this.keySuffixes[i] = ("}:" + i + limits.limits().get(i).algorithm().keySuffix())
					.getBytes(StandardCharsets.UTF_8);
			}
		}

		List<String> strings(long cost) {
			if (cost == 1) {
				return this.strings;
			}
			List<String> copy = new ArrayList<>(this.strings);
			copy.set(0, Long.toString(cost));
			return copy;
		}

		byte[][] bytes(long cost) {
			if (cost == 1) {
				return this.bytes;
			}
			byte[][] copy = this.bytes.clone();
			copy[0] = (cost == 1) ? ONE : Long.toString(cost).getBytes(StandardCharsets.UTF_8);
			return copy;
		}

		byte[][] keys(BucketKeys keys, ClientKey client, PlanLimits limits) {
			byte[] base = keys.hashTagStart(client, limits);
			byte[][] result = new byte[this.keySuffixes.length][];
			for (int i = 0; i < result.length; i++) {
				byte[] suffix = this.keySuffixes[i];
				byte[] key = new byte[base.length + suffix.length];
				System.arraycopy(base, 0, key, 0, base.length);
				System.arraycopy(suffix, 0, key, base.length, suffix.length);
				result[i] = key;
			}
			return result;
		}

	}

}
