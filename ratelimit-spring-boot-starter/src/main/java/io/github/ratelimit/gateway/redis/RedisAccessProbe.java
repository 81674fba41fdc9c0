package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;

/**
 * Tries once, when the application is ready, every kind of Redis call the limiter makes, as the limiter makes them,
 * and logs ONE clear WARN when Redis refuses the credentials ({@code WRONGPASS}, {@code NOAUTH}) or the ACL user
 * lacks a permission ({@code NOPERM}, or a command refused inside the script), naming the properties to fix and
 * what requests get meanwhile. The gateway starts either way (failing open is the policy); the per-request failure
 * log ({@code FailurePolicyLimiter}) stays throttled and without stack traces.
 *
 * <p>The calls: one rate limit check at cost 1 of a probe bucket {@code <prefix>:{ratelimit-probe|ip:startup}:0}
 * (capacity 1, refilled in 1 s, so the key expires within a second; it is no client's bucket), on the limiter's own
 * connection (EVALSHA, EVAL after NOSCRIPT; inside: TIME, GET, SET); one instance heartbeat, when heartbeats are on
 * (the heartbeat script: TIME, ZADD, ZREMRANGEBYSCORE, PEXPIRE, ZCARD); one plan look-up of a key nobody has
 * (GET), with the Redis plan store. All are futures, started on the thread that publishes the ready event and
 * completed on Lettuce's or Reactor's threads; none blocks and none is on the request path. Each is bounded by
 * the probe's timeout. A Redis that is merely unreachable is logged at DEBUG only: the failure log reports it.
 */
public final class RedisAccessProbe implements ApplicationListener<ApplicationReadyEvent> {

	private static final Logger logger = LoggerFactory.getLogger(RedisAccessProbe.class);

	/** How long each call is waited for by default: as long as one connect attempt of the limiter's connection. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

	/** The endpoint group and plan of the probe bucket (no route can name it: it is not configured). */
	static final String PROBE_GROUP = "ratelimit-probe";

	/** The key hash looked up in the plan store (a real hash is 43 base64url characters: never this one). */
	static final String PROBE_PLAN_KEY = "ratelimit-probe";

	/**
	 * Every command the starter sends to Redis, directly or from its Lua scripts: the rate limit script (EVALSHA,
	 * EVAL; inside TIME, GET, SET, HGET, HMGET, HSET, PEXPIRE, for the window algorithms ZADD, ZCARD, ZCOUNT, ZRANGE,
	 * ZREMRANGEBYSCORE, ZREMRANGEBYRANK, and for concurrency limits also ZRANGEBYSCORE, ZSCORE, ZREM), the heartbeat script (ZADD, ZREMRANGEBYSCORE, PEXPIRE, ZCARD), the
	 * withdrawal of this instance at shutdown (ZREM), plan look-ups (GET) and resets from the actuator endpoint (DEL).
	 */
	static final List<String> COMMANDS = List.of("evalsha", "eval", "time", "get", "set", "del", "pexpire", "hget",
			"hmget", "hset", "zadd", "zcard", "zcount", "zrange", "zrem", "zremrangebyscore", "zremrangebyrank", "zrangebyscore", "zscore",
			"publish", "subscribe");

	private static final PlanLimits PROBE_LIMITS = new PlanLimits(PROBE_GROUP, PROBE_GROUP,
			List.of(new LimitDefinition(PROBE_GROUP, 1, 1, Duration.ofSeconds(1))));

	private static final ClientKey PROBE_CLIENT = new ClientKey(ClientKey.Kind.IP, "startup", PROBE_GROUP);

	private final RateLimitStore store;

	private final @Nullable InstanceCounter instanceCounter;

	private final @Nullable RedisPlanStore planStore;

	private final String keyPrefix;

	private final FallbackMode fallbackMode;

	private final Duration timeout;

	private final AtomicBoolean started = new AtomicBoolean();

	/**
	 * Create a probe.
	 * @param store the Redis store of the limiter (the {@code RateLimitStore} bean)
	 * @param instanceCounter the instance counter, or {@code null}; probed only while its heartbeats run
	 * @param planStore the Redis plan store, or {@code null}
	 * @param keyPrefix {@code ratelimit.key-prefix}, e.g. {@code rl}
	 * @param fallbackMode {@code ratelimit.fallback.mode}: what the WARN says normal routes get meanwhile
	 * @param timeout how long each call is waited for (a connect attempt included), e.g. 30 s
	 */
	public RedisAccessProbe(RateLimitStore store, @Nullable InstanceCounter instanceCounter,
			@Nullable RedisPlanStore planStore, String keyPrefix, FallbackMode fallbackMode, Duration timeout) {
		this.store = store;
		this.instanceCounter = instanceCounter;
		this.planStore = planStore;
		this.keyPrefix = keyPrefix;
		this.fallbackMode = fallbackMode;
		this.timeout = timeout;
	}

	/**
	 * The ACL rule (as {@code ACL SETUSER <user> on ><password> <rule>} takes it) that allows the starter exactly
	 * what it needs: its keys, {@link #COMMANDS} and one channel ({@code <keyPrefix>:changes}, see
	 * {@link RedisClientChanges}), nothing else.
	 * @param keyPrefix {@code ratelimit.key-prefix}, e.g. {@code rl}
	 * @param planKeyPrefix the plan store's key prefix ({@code ratelimit.plan-store.key-prefix}), or {@code null}
	 * for the default ({@code <key-prefix>:plan:}, already covered by the key pattern)
	 * @return e.g. {@code resetkeys ~rl:* resetchannels &rl:changes -@all +evalsha +eval ...}
	 */
	public static String aclRule(String keyPrefix, @Nullable String planKeyPrefix) {
		StringBuilder rule = new StringBuilder("resetkeys ~").append(keyPrefix).append(":*");
		if (planKeyPrefix != null && !planKeyPrefix.startsWith(keyPrefix + ":")) {
			rule.append(" ~").append(planKeyPrefix).append('*');
		}
		rule.append(" resetchannels &").append(keyPrefix).append(RedisClientChanges.CHANNEL_SUFFIX).append(" -@all");
		COMMANDS.forEach((command) -> rule.append(" +").append(command));
		return rule.toString();
	}

	/** Starts the probe once, when the application is ready; returns at once. */
	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		if (this.started.compareAndSet(false, true)) {
			probe();
		}
	}

	/**
	 * Make the calls now and log the WARN if Redis refuses access.
	 * @return the WARN's text once every call has answered or timed out, or {@code null} when there was no access
	 * problem; never completed exceptionally
	 */
	public CompletableFuture<@Nullable String> probe() {
		Map<String, CompletableFuture<?>> calls = new LinkedHashMap<>();
		calls.put("rate limit checks", call(() -> this.store.tryConsume(PROBE_CLIENT, PROBE_LIMITS, 1)));
		InstanceCounter counter = this.instanceCounter;
		if (counter != null && counter.isRunning()) {
			calls.put("instance heartbeats", call(() -> counter.beat()));
		}
		RedisPlanStore plans = this.planStore;
		if (plans != null) {
			calls.put("plan look-ups", call(() -> plans.findPlan(PROBE_PLAN_KEY).toCompletableFuture()));
		}
		return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new))
			.handle((ignored, ex) -> report(calls));
	}

	private CompletableFuture<?> call(Supplier<CompletableFuture<?>> call) {
		CompletableFuture<?> future;
		try {
			future = call.get();
		}
		catch (RuntimeException ex) {
			future = CompletableFuture.failedFuture(ex);
		}
		return future.toCompletableFuture().orTimeout(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	private @Nullable String report(Map<String, CompletableFuture<?>> calls) {
		Map<String, Throwable> failures = new LinkedHashMap<>();
		calls.forEach((name, call) -> call.handle((value, ex) -> (ex != null) ? failures.put(name, ex) : null).join());
		List<RedisAccessProblem> problems = failures.values().stream().map(RedisAccessProblem::of).toList();
		String warning = null;
		if (problems.contains(RedisAccessProblem.AUTHENTICATION)) {
			warning = authenticationWarning(failures);
		}
		else if (problems.contains(RedisAccessProblem.PERMISSION)) {
			warning = permissionWarning(failures);
		}
		if (warning != null) {
			logger.warn(warning);
		}
		else if (!failures.isEmpty()) {
			logger.debug("Rate limiter start-up probe: Redis not usable yet ({})", describe(failures, false));
		}
		else {
			logger.debug("Rate limiter start-up probe: {} work with this Redis user", calls.keySet());
		}
		return warning;
	}

	private String authenticationWarning(Map<String, Throwable> failures) {
		Throwable first = failures.values().stream()
			.filter((ex) -> RedisAccessProblem.of(ex) == RedisAccessProblem.AUTHENTICATION)
			.findFirst()
			.orElseThrow();
		return "Rate limiter: Redis refused the credentials of the limiter's connection ("
				+ RedisAccessProblem.reason(first) + "): check spring.data.redis.username and "
				+ "spring.data.redis.password (or the user info of spring.data.redis.url). " + meanwhile();
	}

	private String permissionWarning(Map<String, Throwable> failures) {
		return "Rate limiter: the Redis ACL user (spring.data.redis.username) may not run what the limiter needs on "
				+ "keys under ratelimit.key-prefix '" + this.keyPrefix + "' (" + describe(failures, true)
				+ "): grant it 'ACL SETUSER <user> " + aclRule(this.keyPrefix, planKeyPrefixOrNull()) + "' (see "
				+ "'Managed Redis: AUTH, ACL, TLS' in the operations guide), or set ratelimit.key-prefix to a prefix "
				+ "its key patterns allow. " + meanwhile();
	}

	private @Nullable String planKeyPrefixOrNull() {
		RedisPlanStore plans = this.planStore;
		return (plans != null) ? plans.getKeyPrefix() : null;
	}

	private String meanwhile() {
		String normal = (this.fallbackMode == FallbackMode.ALLOW)
				? "normal routes let requests through unchecked (ratelimit.fallback.mode=allow)"
				: "normal routes use the local fallback limiter (this instance's share of each limit)";
		return "Until this is fixed no decision comes from Redis: " + normal
				+ ", critical routes answer 503. Logged once, at start-up.";
	}

	private static String describe(Map<String, Throwable> failures, boolean accessOnly) {
		List<String> parts = new ArrayList<>();
		failures.forEach((name, ex) -> {
			if (!accessOnly || RedisAccessProblem.of(ex) != RedisAccessProblem.OTHER) {
				parts.add(name + ": " + RedisAccessProblem.reason(ex));
			}
		});
		return parts.stream().collect(Collectors.joining("; "));
	}

	@Override
	public String toString() {
		return "RedisAccessProbe[" + this.keyPrefix + "]";
	}

}
