package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.chain.LeaseStore;
import io.github.ratelimit.gateway.chain.QuotaState;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.support.ThrottledLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.Lifecycle;
import org.springframework.context.Phased;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@link RateLimitStore} keeping every limit's state in Redis (token bucket, sliding window log, sliding window
 * counter or fixed window, per {@link LimitDefinition#algorithm()}), checked and updated by one atomic Lua script
 * ({@value #SCRIPT_LOCATION}) per request, whatever mix of algorithms the request's limits use; the same script gives
 * back the tokens of an abandoned check. The store's job is the logic around the script: the keys
 * ({@link BucketKeys}), the arguments (encoded once per limits snapshot, held by its {@link PlanLimits}) and the reply (decoded into a
 * {@link RateLimitDecision}), and the concurrency slots of admitted requests (taken by the check, given back when the
 * front end releases them, see {@link HeldSlots}). Reaching Redis is its {@link RedisScriptExecutor}'s job ({@link LettuceScriptExecutor}
 * or {@link SpringDataScriptExecutor}), which the store owns: it starts, stops and closes it with itself.
 *
 * <p>Script arguments (see the script's header): {@code KEYS} = one key per limit ({@link BucketKeys}), then one per
 * concurrency limit (its hold statistics); {@code ARGV} = operation ({@code check}, {@code refund}, or
 * {@code acquire} and {@code release} with the slot's id after n when the limits count requests in flight), cost,
 * limit count n, then four values per limit: the
 * {@linkplain Algorithm#scriptCode() algorithm code}, capacity, refill tokens and refill period (microseconds); a
 * {@code lease} has five more values after n (tokens wanted, the lease's duration, and the previous lease's granted
 * tokens, unspent tokens and end). As a {@link LeaseStore} it takes token leases of token buckets. As
 * {@link StoreShards} it names the Redis Cluster master a client's keys go to (its executor's view of the topology),
 * so that a failed master's breaker covers only its clients.
 *
 * <p>Every call answers a future; no Reactor here.
 */
public class RedisRateLimitStore
		implements RateLimitStore, LeaseStore, StoreShards, SmartLifecycle, DisposableBean {

	/** Class path folder of the rate limit script's files (every algorithm, check and refund), see {@link LuaScript}. */
	public static final String SCRIPT_LOCATION = LuaScript.RATE_LIMIT_FOLDER;

	/** {@code ARGV[1]} of a check. */
	static final String CHECK = "check";

	/** {@code ARGV[1]} of a refund. */
	static final String REFUND = "refund";

	/** {@code ARGV[1]} of the call that charges or gives back the difference between a reservation and the use. */
	static final String SETTLE = "settle";

	/** {@code ARGV[1]} of a check that takes a lease. */
	static final String LEASE = "lease";

	/** {@code ARGV[1]} of a check that takes a slot in every concurrency limit. */
	static final String ACQUIRE = "acquire";

	/** {@code ARGV[1]} of the call that gives a completed request's slots back. */
	static final String RELEASE = "release";

	/** {@code ARGV[1]} of the call that gives back slots a request never used (hold time not counted). */
	static final String ABANDON = "abandon";

	/** {@code ARGV[1]} of the call that grants a client's quotas more tokens in their current period. */
	static final String TOP_UP = "topup";

	/** {@code ARGV[1]} of the call that reads quotas' use and period. */
	static final String QUOTA = "quota";

	/**
	 * Boundaries sent per quota: the previous period's start to the next period's end, so that a gateway clock off
	 * by less than the shortest of those three periods still counts in Redis' period.
	 */
	static final int QUOTA_BOUNDARIES = 4;

	/**
	 * Longest wait for a settlement's reply, from when it is sent: the limiter's own client waits at least as long
	 * for a script's reply ({@link LimiterConnectionFactory#MIN_SCRIPT_REPLY_TIMEOUT}), so the store, not the
	 * client, decides when a settlement has failed.
	 */
	static final Duration SETTLE_REPLY_WAIT = LimiterConnectionFactory.MIN_SCRIPT_REPLY_TIMEOUT;

	/** Longest wait, when the store stops, for the slots still held to be given back. */
	private static final Duration RELEASE_ON_STOP_WAIT = Duration.ofSeconds(2);

	private static final Logger logger = LoggerFactory.getLogger(RedisRateLimitStore.class);

	private final RedisScriptExecutor executor;

	private final LuaScript script;

	private final BucketKeys keys;

	private volatile boolean running;

	/** Random start of this store's slot ids, so that ids of two instances never meet. */
	private final String slotIdPrefix = newSlotIdPrefix();

	private final AtomicLong slotIds = new AtomicLong();

	/** Slots taken and not yet given back: released when the store stops. */
	private final Set<RedisSlots> heldSlots = ConcurrentHashMap.newKeySet();

	private final ThrottledLog releaseFailures = new ThrottledLog(Duration.ofSeconds(10));

	private final ThrottledLog settleFailures = new ThrottledLog(Duration.ofSeconds(10));

	/** Each shard's clock, for the deadlines of checks and settlements (read while the store runs). */
	private final RedisClocks clocks;

	/** {@link #SETTLE_REPLY_WAIT}; tests lower it ({@link #settleReplyWait(Duration)}). */
	private volatile Duration settleReplyWait = SETTLE_REPLY_WAIT;

	/**
	 * Create a store running the shipped script ({@value #SCRIPT_LOCATION}).
	 * @param executor reaches Redis; owned by the store from now on (started, stopped and closed with it)
	 * @param keys names the bucket keys
	 */
	public RedisRateLimitStore(RedisScriptExecutor executor, BucketKeys keys) {
		this(executor, rateLimitScript(), keys);
	}

	/**
	 * Create a store running the given script.
	 * @param executor reaches Redis; owned by the store from now on (started, stopped and closed with it)
	 * @param script the rate limit script (the {@code rateLimitScript} bean), see
	 * {@link #rateLimitScript()}; its text is read once, now
	 * @param keys names the bucket keys
	 */
	public RedisRateLimitStore(RedisScriptExecutor executor, RedisScript<List<Long>> script, BucketKeys keys) {
		this.executor = executor;
		this.script = LuaScript.of(script);
		this.keys = keys;
		this.clocks = new RedisClocks(executor);
	}

	/**
	 * Load the rate limit script from the class path: it checks every {@link Algorithm} and gives back the tokens of
	 * abandoned checks.
	 * @return the script, returning a flat list of integers for a check
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	public static RedisScript<List<Long>> rateLimitScript() {
		return (RedisScript) RedisScript.of(LuaScript.rateLimit().text(), List.class);
	}

	/**
	 * Check and consume the cost from every limit, all or nothing: one script call.
	 * @param client who is limited
	 * @param limits the plan's limits in the endpoint group
	 * @param cost tokens this request takes from each limit counting requests (1 to the smallest such capacity), units
	 * it reserves in each limit counting usage; {@link Cost#NONE} reads the buckets without consuming
	 * @return the decision; with concurrency limits among {@code limits} and tokens above 0, an allowed decision holds
	 * a slot in each ({@link RateLimitDecision#slots()}, given back in one script call); with limits counting usage, an
	 * allowed decision of a {@linkplain Cost#reserves() reserving} cost holds it as its reservation
	 * ({@link RateLimitDecision#reservation()}, settled in one script call).
	 * Completed exceptionally when Redis is unreachable, answers an error or an unexpected reply (an
	 * {@link IllegalStateException} naming it); never completed with {@code null}
	 */
	@Override
	public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
		return tryConsume(client, limits, cost, keys(client, limits), 0);
	}

	/**
	 * {@inheritDoc}
	 * <p>The script gets the deadline in the Redis time of the shard the client's keys are on ({@link RedisClocks}:
	 * at or before that shard's time at the deadline) and refuses the check, writing nothing, when Redis runs it
	 * later; no deadline is sent until the shard's clock has been read once.
	 * @return as {@link #tryConsume(ClientKey, PlanLimits, Cost)}; completed with a {@link TimeoutException} when
	 * Redis ran the check past its deadline (nothing consumed)
	 */
	@Override
	public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost,
			long deadlineNanos) {
		return tryConsume(client, limits, cost, keys(client, limits), deadlineMicros(client, limits, deadlineNanos));
	}

	private CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost,
			byte[][] keys, long deadlineMicros) {
		ScriptArguments arguments = arguments(limits);
		if (cost.tokens() == 0 || !arguments.takesSlots) {
			return this.executor.eval(this.script, keys, arguments.check(cost, deadlineMicros))
				.thenApply((reply) -> reserving(ScriptReplies.toDecision(limits, reply), client, arguments, keys,
						cost));
		}
		byte[] slot = nextSlotId();
		byte[][] acquire = arguments.acquire(cost, slot, deadlineMicros);
		return this.executor.eval(this.script, keys, acquire).thenApply((reply) -> {
			RateLimitDecision decision = ScriptReplies.toDecision(limits, reply);
			return decision.allowed()
					? reserving(decision.withSlots(hold(arguments, keys, slot)), client, arguments, keys, cost)
					: decision;
		});
	}

	/** An allowed decision of a reserving cost, with what it took as its reservation (the answer settles it). */
	private RateLimitDecision reserving(RateLimitDecision decision, ClientKey client, ScriptArguments arguments,
			byte[][] keys, Cost cost) {
		if (!decision.allowed() || !cost.reserves() || cost.isNone()) {
			return decision;
		}
		return decision.withReservation(new RedisReservation(client, arguments, keys, cost));
	}

	/**
	 * What one allowed check took, reserved until its answer settles it (when its route measures answers): by the
	 * script's {@code settle}, once, in one call when anything changes; ended at most once (its own flag). A call that
	 * fails (Redis unreachable, no reply within {@link #SETTLE_REPLY_WAIT}, refused past its deadline) is logged at
	 * most once per 10 s and not retried: the reservation stays charged.
	 *
	 * <p>The call carries a deadline in the Redis time of the shard the client's keys are on ({@link RedisClocks}):
	 * a tenth of the wait before the store gives up on the reply, the rest left for the reply to come back. The
	 * script refuses a settle Redis runs later (a paused or stalled Redis, a command queued behind a dead
	 * connection), writing nothing, so a settlement counted as failed leaves exactly the reservation charged however
	 * late Redis runs it. Until the shard's clock has been read once, no deadline is sent, and a settlement Redis
	 * runs after the store gave up still changes the charge (unseen by the meters).
	 */
	@SuppressWarnings("serial") // never serialized: its state is whether it has ended
	private final class RedisReservation extends AtomicBoolean implements Reservation {

		private final ClientKey client;

		private final ScriptArguments arguments;

		private final byte[][] keys;

		private final Cost taken;

		RedisReservation(ClientKey client, ScriptArguments arguments, byte[][] keys, Cost taken) {
			this.client = client;
			this.arguments = arguments;
			this.keys = keys;
			this.taken = taken;
		}

		@Override
		public CompletionStage<Long> settle(long used) {
			return end(new Cost(0, used - this.taken.usage()));
		}

		@Override
		public CompletionStage<Long> cancel() {
			return end(this.taken.negated());
		}

		@Override
		public long reserved() {
			return this.taken.usage();
		}

		private CompletionStage<Long> end(Cost change) {
			PlanLimits limits = this.arguments.limits;
			// limits without a usage limit take no usage: only their tokens can change
			Cost difference = limits.hasUsageLimits() ? change : new Cost(change.tokens(), 0);
			if (!compareAndSet(false, true)) { // ended before
				return Reservation.NOTHING;
			}
			long reserved = limits.hasUsageLimits() ? this.taken.usage() : 0;
			if (difference.isNone()) { // nothing to change
				return CompletableFuture.completedFuture(reserved);
			}
			CompletableFuture<List<Object>> call;
			try {
				long waitNanos = RedisRateLimitStore.this.settleReplyWait.toNanos();
				long deadlineMicros = deadlineMicros(this.client, limits,
						System.nanoTime() + waitNanos - waitNanos / 10);
				call = RedisRateLimitStore.this.executor
					.eval(RedisRateLimitStore.this.script, this.keys, this.arguments.settle(difference, deadlineMicros))
					.copy()
					.orTimeout(waitNanos, TimeUnit.NANOSECONDS);
			}
			catch (RuntimeException ex) { // an executor that breaks its contract must not break the caller's
				call = CompletableFuture.failedFuture(ex);
			}
			return call.handle((reply, ex) -> {
				if (ex == null) {
					try {
						return (reserved == 0) ? 0L : reserved + ScriptReplies.toUsageChange(limits, reply);
					}
					catch (RuntimeException unexpected) { // a reply of another shape
						ex = unexpected;
					}
				}
				settleFailed(limits, ex);
				return reserved; // the reservation stays charged
			});
		}

	}

	private void settleFailed(PlanLimits limits, Throwable error) {
		this.settleFailures.log((skipped) -> logger.warn(
				"Could not settle a reservation in group '{}' ({}): it stays charged as reserved{}", limits.group(),
				LettuceScriptConnection.unwrap(error), ThrottledLog.notLogged(skipped)));
	}

	/**
	 * The slots an allowed acquire took, registered until given back. Should the acquire's future be abandoned
	 * before this runs, the caller releases the decision it later gets.
	 */
	private HeldSlots hold(ScriptArguments arguments, byte[][] keys, byte[] slot) {
		RedisSlots slots = new RedisSlots(arguments, keys, slot);
		this.heldSlots.add(slots);
		return slots;
	}

	/**
	 * Concurrency slots taken in Redis by one acquire: given back by the script's {@code release} (or {@code abandon},
	 * which does not count the hold time), once, or kept (left to expire at the limit's max request duration). A call that fails (Redis unreachable) is logged at most once per
	 * 10 s; the slots then free themselves after the limits' longest request duration.
	 */
	private final class RedisSlots implements HeldSlots {

		private final ScriptArguments arguments;

		private final byte[][] keys;

		private final byte[] slot;

		private final AtomicBoolean released = new AtomicBoolean();

		RedisSlots(ScriptArguments arguments, byte[][] keys, byte[] slot) {
			this.arguments = arguments;
			this.keys = keys;
			this.slot = slot;
		}

		@Override
		public void release() {
			giveBack(false);
		}

		@Override
		public void abandon() {
			giveBack(true);
		}

		/** No script call: the slots stay in Redis until they expire; no longer given back on stop. */
		@Override
		public void keep() {
			if (this.released.compareAndSet(false, true)) {
				RedisRateLimitStore.this.heldSlots.remove(this);
			}
		}

		CompletableFuture<Void> giveBack(boolean unused) {
			if (!this.released.compareAndSet(false, true)) {
				return CompletableFuture.completedFuture(null);
			}
			byte[][] args = unused ? this.arguments.abandon(this.slot) : this.arguments.release(this.slot);
			CompletableFuture<List<Object>> call;
			try {
				call = RedisRateLimitStore.this.executor.eval(RedisRateLimitStore.this.script, this.keys, args);
			}
			catch (RuntimeException ex) { // an executor that breaks its contract must not break the caller's
				call = CompletableFuture.failedFuture(ex);
			}
			return call.handle((reply, ex) -> {
				RedisRateLimitStore.this.heldSlots.remove(this);
				if (ex != null) {
					releaseFailed(this.arguments.limits, ex);
				}
				return null;
			});
		}

	}

	private void releaseFailed(PlanLimits limits, Throwable error) {
		this.releaseFailures.log((skipped) -> logger.warn(
				"Could not give back a concurrency slot in group '{}' ({}): it frees itself after the limit's "
						+ "max-request-duration{}",
				limits.group(), LettuceScriptConnection.unwrap(error), ThrottledLog.notLogged(skipped)));
	}

	/**
	 * The number of concurrency slots this store took in Redis and has not given back yet (requests in flight).
	 * @return slots held, 0 or more
	 */
	public int heldSlotCount() {
		return this.heldSlots.size();
	}

	private byte[] nextSlotId() {
		return (this.slotIdPrefix + Long.toString(this.slotIds.incrementAndGet(), 36))
			.getBytes(StandardCharsets.US_ASCII);
	}

	private static String newSlotIdPrefix() {
		byte[] random = new byte[9];
		new SecureRandom().nextBytes(random);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(random) + ":";
	}

	/**
	 * Check and consume {@code cost} tokens and take a lease of up to {@code wanted} more, giving back the previous
	 * lease: one script call ({@code lease}, token buckets only).
	 * @return the decision and the lease; completed exceptionally when Redis is unreachable, answers an error (a limit
	 * that is not a token bucket) or an unexpected reply
	 */
	@Override
	public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
			long durationMicros, ReturnedLease previous) {
		return lease(client, limits, cost, wanted, durationMicros, previous, 0L, false);
	}

	/**
	 * {@inheritDoc}
	 * <p>The deadline is sent as a check's is ({@link #tryConsume(ClientKey, PlanLimits, Cost, long)}).
	 */
	@Override
	public CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
			long durationMicros, ReturnedLease previous, long deadlineNanos) {
		return lease(client, limits, cost, wanted, durationMicros, previous, deadlineNanos, true);
	}

	private CompletableFuture<Lease> lease(ClientKey client, PlanLimits limits, long cost, long wanted,
			long durationMicros, ReturnedLease previous, long deadlineNanos, boolean hasDeadline) {
		long deadlineMicros = hasDeadline ? deadlineMicros(client, limits, deadlineNanos) : 0;
		return this.executor
			.eval(this.script, keys(client, limits),
					arguments(limits).lease(cost, wanted, durationMicros, previous, deadlineMicros))
			.thenApply((reply) -> ScriptReplies.toLease(limits, reply));
	}

	/**
	 * Set how long settlements' replies are waited for (tests: a shorter wait than {@link #SETTLE_REPLY_WAIT}).
	 * @param wait at most {@link LimiterConnectionFactory#MIN_SCRIPT_REPLY_TIMEOUT}, so the limiter's client does not
	 * give up first; above 0
	 */
	void settleReplyWait(Duration wait) {
		if (wait.isNegative() || wait.isZero() || wait.compareTo(LimiterConnectionFactory.MIN_SCRIPT_REPLY_TIMEOUT) > 0) {
			throw new IllegalArgumentException("The settle reply wait must be above 0 and at most "
					+ LimiterConnectionFactory.MIN_SCRIPT_REPLY_TIMEOUT + ", got " + wait);
		}
		this.settleReplyWait = wait;
	}

	/**
	 * The shards' clocks as this store knows them (tests: whether every shard has been sampled).
	 * @return the clocks the checks' deadlines are computed with
	 */
	RedisClocks clocks() {
		return this.clocks;
	}

	/** A gateway deadline in the Redis time of the shard holding the client's keys; 0 while that is not known. */
	private long deadlineMicros(ClientKey client, PlanLimits limits, long deadlineNanos) {
		return this.clocks.deadlineMicros(shardOf(client, limits), deadlineNanos);
	}

	private byte[][] keys(ClientKey client, PlanLimits limits) {
		return arguments(limits).keys(this.keys, client);
	}

	/**
	 * Give back the tokens an allowed check took from every limit (the caller abandoned that check): one script
	 * call; each algorithm's refund is in the script beside its check. A limit whose state has expired is left alone.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @param cost what the abandoned check took (its tokens, and its reservation in the limits counting usage)
	 * @return completion; completed exceptionally when Redis is unreachable or answers an error
	 */
	@Override
	public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
		ScriptArguments arguments = arguments(limits);
		return this.executor.eval(this.script, arguments.keys(this.keys, client), arguments.refund(cost))
			.thenApply((reply) -> null);
	}

	/**
	 * {@inheritDoc}
	 * <p>On a Cluster, the master serving the slot of the client's keys in the group (one CRC16 of their hash tag);
	 * otherwise {@link StoreShards#SINGLE_SHARD}, at no cost.
	 */
	@Override
	public String shardOf(ClientKey client, PlanLimits limits) {
		return this.executor.isSharded() ? this.executor.shardOf(this.keys.slotKey(client, limits))
				: StoreShards.SINGLE_SHARD;
	}

	@Override
	public Set<String> shards() {
		return this.executor.shards();
	}

	/** {@inheritDoc} <p>See {@link RedisScriptExecutor#refusedWhileReconnecting}. */
	@Override
	public boolean refusedWhileReconnecting(Throwable error) {
		return RedisScriptExecutor.refusedWhileReconnecting(error);
	}

	/** {@inheritDoc} <p>As the executor reports it ({@link RedisScriptExecutor#connectedTo}). */
	@Override
	public boolean connectedTo(String shard) {
		return this.executor.connectedTo(shard);
	}

	/** {@inheritDoc} <p>As the executor reports it ({@link RedisScriptExecutor#onConnected}). */
	@Override
	public AutoCloseable onConnected(java.util.function.Consumer<String> listener) {
		return this.executor.onConnected(listener);
	}

	/**
	 * Reset a client's buckets in an endpoint group to full: one {@code DEL} of every limit's key (all of one
	 * client's keys in a group share a hash tag, so this works on a Redis Cluster too).
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @return the number of keys that existed and were removed (0 to the number of limits, plus one per concurrency
	 * limit: its hold statistics); completed exceptionally when Redis is unreachable
	 */
	@Override
	public CompletableFuture<Long> reset(ClientKey client, PlanLimits limits) {
		return this.executor.delete(arguments(limits).keys(this.keys, client));
	}

	/**
	 * Read a client's quotas: one script call ({@code quota}) when {@code limits} hold any, which writes nothing; the
	 * period is the one that holds Redis' time.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @return one state per quota, in their order; completed exceptionally when Redis is unreachable, answers an error
	 * (its time outside the boundaries the gateway sent) or an unexpected reply
	 */
	@Override
	public CompletableFuture<List<QuotaState>> readQuotas(ClientKey client, PlanLimits limits) {
		if (!limits.hasQuotas()) {
			return CompletableFuture.completedFuture(List.of());
		}
		ScriptArguments arguments = arguments(limits);
		return this.executor.eval(this.script, arguments.keys(this.keys, client), arguments.quota())
			.thenApply((reply) -> ScriptReplies.toQuotaStates(limits, reply));
	}

	/**
	 * Grant a client's quota more tokens in the period that holds Redis' time: one script call ({@code topup}), which
	 * makes the quota's state for that period when it has none, expiring at the period's end.
	 * @param client the client
	 * @param limits the plan's limits in the endpoint group
	 * @param quota the quota, one of {@code limits}
	 * @param tokens tokens granted, 1 to {@link LimitDefinition#MAX_TOKENS}
	 * @return the tokens added: {@code tokens}, or fewer (0 included) where the period's top-ups reach
	 * {@link LimitDefinition#MAX_TOKENS} less the limit; completed with an {@link IllegalArgumentException} for a
	 * limit that is not a quota among {@code limits} or tokens out of range (nothing sent), exceptionally when Redis
	 * is unreachable or answers an error (its time outside the boundaries the gateway sent: nothing written)
	 */
	@Override
	public CompletableFuture<Long> topUp(ClientKey client, PlanLimits limits, LimitDefinition quota, long tokens) {
		int index = limits.limits().indexOf(quota);
		if (index < 0 || !quota.isQuota()) {
			return CompletableFuture.failedFuture(new IllegalArgumentException(
					"'" + quota.policyName() + "' is not a quota of plan '" + limits.plan() + "' in group '"
							+ limits.group() + "'"));
		}
		if (tokens < 1 || tokens > LimitDefinition.MAX_TOKENS) {
			return CompletableFuture.failedFuture(new IllegalArgumentException(
					"a top-up is 1 to " + LimitDefinition.MAX_TOKENS + " tokens, was " + tokens));
		}
		ScriptArguments arguments = arguments(limits);
		return this.executor.eval(this.script, arguments.keys(this.keys, client), arguments.topUp(index, tokens))
			.thenApply((reply) -> ScriptReplies.number(reply, 0));
	}

	/**
	 * Starts the executor too, if it has a life cycle (a {@link LettuceScriptExecutor} opens a new connection), then
	 * reading the shards' clocks for the checks' deadlines ({@link RedisClocks}).
	 */
	@Override
	public void start() {
		this.running = true;
		if (this.executor instanceof Lifecycle lifecycle) {
			lifecycle.start();
		}
		this.clocks.start();
	}

	/**
	 * Gives back the concurrency slots still held (waiting at most 2 s for Redis to answer), then stops the executor
	 * too, if it has a life cycle (a {@link LettuceScriptExecutor} closes its connection).
	 */
	@Override
	public void stop() {
		this.running = false;
		this.clocks.stop();
		releaseHeldSlots();
		if (this.executor instanceof Lifecycle lifecycle) {
			lifecycle.stop();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	private void releaseHeldSlots() {
		List<CompletableFuture<Void>> releases = new ArrayList<>();
		for (RedisSlots slots : this.heldSlots) {
			releases.add(slots.giveBack(true)); // cut short: their hold time would mislead the estimate
		}
		if (releases.isEmpty()) {
			return;
		}
		try {
			CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
				.get(RELEASE_ON_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
			logger.info("Gave back {} concurrency slot(s) of requests still in flight on shutdown", releases.size());
		}
		catch (TimeoutException | java.util.concurrent.ExecutionException ex) {
			logger.warn("Could not give back every concurrency slot on shutdown within {}: they free themselves after "
					+ "their limit's max-request-duration", RELEASE_ON_STOP_WAIT);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * The executor's phase (a {@link LettuceScriptExecutor}: one after its connection factory's), else 0.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return (this.executor instanceof Phased phased) ? phased.getPhase() : 0;
	}

	/** Closes the executor (a {@link LettuceScriptExecutor} closes its connection). */
	@Override
	public void destroy() {
		this.clocks.close();
		this.executor.close();
	}

	private static ScriptArguments arguments(PlanLimits limits) {
		return limits.compiled(ScriptArguments.COMPILER);
	}

	/**
	 * The script's {@code ARGV} for a check of some limits at cost 1, as of the gateway's clock now: see
	 * {@link #scriptArguments(PlanLimits, Instant)}.
	 * @param limits the limits
	 * @return the arguments, in order
	 */
	public static List<String> scriptArguments(PlanLimits limits) {
		return scriptArguments(limits, Instant.now());
	}

	/**
	 * The script's {@code ARGV} for a check of some limits at cost 1: {@code check}, limit count n, deadline 0 (none:
	 * the check runs whenever Redis runs it), then algorithm
	 * code, capacity, refill tokens, refill period in microseconds and cost per limit (1 for a limit counting
	 * requests, 0 for a limit counting usage and for a concurrency limit, which a check reads). A quota's refill
	 * period is the four boundaries of the periods around {@code now} instead
	 * ({@link QuotaPeriod#boundariesAround}: microseconds, comma-separated), of which Redis' clock picks one.
	 * @param limits the limits
	 * @param now the gateway's time, which places a quota's boundaries
	 * @return the arguments, in order
	 */
	public static List<String> scriptArguments(PlanLimits limits, Instant now) {
		return ScriptArguments.checkAtCostOne(limits, now);
	}

	@Override
	public String toString() {
		return "RedisRateLimitStore[" + SCRIPT_LOCATION + ", " + this.executor + "]";
	}

}
