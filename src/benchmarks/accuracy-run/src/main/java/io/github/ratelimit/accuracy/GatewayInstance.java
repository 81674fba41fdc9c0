package io.github.ratelimit.accuracy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.LeasingRateLimiter;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.ScopedRateLimiter;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.LettuceScriptExecutor;
import io.github.ratelimit.gateway.redis.LuaScript;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.RedisScriptExecutor;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One simulated gateway instance: its own Lettuce client and connection, sending one client's checks at a steady
 * rate (open loop: a check is sent when due, whether or not earlier ones have been answered) and recording each.
 *
 * <p>It runs the starter's script exactly as shipped with one line appended to the reply: the Redis time (µs) the
 * script decided at, so that "most admitted in any window" is computed on the limiter's own clock rather than on
 * client-side timestamps that carry a round trip of uncertainty. Keys and arguments are built by the starter's own
 * {@link BucketKeys} and {@link RedisRateLimitStore#scriptArguments(PlanLimits)}, and the script runs through
 * Spring Data Redis (EVALSHA, EVAL on NOSCRIPT) as in the starter.
 *
 * <p>With token leases ({@link Leases#on()}, token buckets only) the checks go through the starter's chain as its
 * auto-configuration wires it: {@link ScopedRateLimiter} over {@link LeasingRateLimiter} (duration and max entries as
 * {@code ratelimit.leases.*}) over a {@link RedisRateLimitStore} on a {@link LettuceScriptExecutor} of its own, running
 * the same instrumented script; a {@link TimingExecutor} between store and executor takes the Redis time off each reply
 * (so the store sees the shipped reply) and hands it to the check that made the call. A check answered from a lease
 * ({@link RateLimitDecision.Source#LEASED}) has no Redis time: it is recorded at the wall clock right after the
 * chain answered it (the same clock Redis reads, on one machine), between the lease's grant and its end.
 *
 * <p>As a child JVM ({@link #main(String[])}): connects, warms up, prints {@code READY}, waits for
 * {@code START <epoch µs>} on standard input, sends, writes its samples to a file and exits.
 */
public final class GatewayInstance implements AutoCloseable {

	private final LettuceConnectionFactory connectionFactory;

	private final ReactiveStringRedisTemplate redis;

	private final RedisScript<List<Long>> script;

	private final PlanLimits limits;

	private final List<String> keys;

	private final List<String> arguments;

	/** With leases: the store under the chain; else {@code null}. */
	private final RedisRateLimitStore store;

	/** With leases: the lease layer; else {@code null}. */
	private final LeasingRateLimiter leasing;

	/** With leases: the chain's outer layer, the scopes; else {@code null} (the script runs directly). */
	private final RateLimitStore chain;

	/**
	 * Connect, without leases.
	 * @param redisUri {@code redis://host:port}
	 * @param plan the plan under test
	 */
	public GatewayInstance(String redisUri, Plan plan) {
		this(redisUri, plan, Leases.OFF);
	}

	/**
	 * Connect.
	 * @param redisUri {@code redis://host:port}
	 * @param plan the plan under test
	 * @param leases token leases (used for a token bucket only)
	 */
	public GatewayInstance(String redisUri, Plan plan, Leases leases) {
		URI uri = URI.create(redisUri);
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(uri.getHost(), (uri.getPort() > 0) ? uri.getPort() : 6379));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.redis = new ReactiveStringRedisTemplate(this.connectionFactory);
		this.script = instrumentedScript();
		Leases used = leases.forPlan(plan);
		this.limits = plan.limits(used.budgetPercent());
		this.keys = new BucketKeys("acc").keysFor(Plan.CLIENT, this.limits);
		this.arguments = RedisRateLimitStore.scriptArguments(this.limits);
		if (used.on()) {
			// as LimiterChainBuilder layers them over the rateLimitStore bean (Lettuce executor): scopes over leases
			// (without the breakers and the failure policy)
			this.store = new RedisRateLimitStore(new TimingExecutor(new LettuceScriptExecutor(this.connectionFactory)),
					this.script, new BucketKeys("acc"));
			this.store.start();
			this.leasing = new LeasingRateLimiter(this.store, used.duration(), Leases.MAX_ENTRIES);
			this.chain = new ScopedRateLimiter(this.leasing);
		}
		else {
			this.store = null;
			this.leasing = null;
			this.chain = null;
		}
	}

	/**
	 * The shipped script, replying with the Redis time it decided at after the usual values (the one
	 * {@code return result} of a check, at the end of the dispatcher's {@code run()}).
	 * @return the script
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	static RedisScript<List<Long>> instrumentedScript() {
		String shipped = LuaScript.rateLimit().text();
		String check = "\n  return result\nend\n";
		int at = shipped.indexOf(check);
		if (at < 0 || shipped.indexOf(check, at + 1) >= 0) {
			throw new IllegalStateException("The script's run() no longer ends with one 'return result'; update the "
					+ "harness");
		}
		String instrumented = shipped.substring(0, at) + "\n  result[#result + 1] = now" + shipped.substring(at);
		return (RedisScript) RedisScript.of(instrumented, List.class);
	}

	/**
	 * Load the script, open the connection and let the JIT compile the sending path: 2,000 checks on a key of its
	 * own, some of them in parallel as in the run.
	 */
	public void warmUp() {
		ClientKey scratch = new ClientKey(ClientKey.Kind.API_KEY, "warm-up-" + ProcessHandle.current().pid() + "-"
				+ System.identityHashCode(this), "p");
		if (this.chain != null) {
			// through the chain (leases taken and spent), four at a time; then the scratch client's lease and keys go
			for (int i = 0; i < 500; i++) {
				CompletableFuture<?>[] batch = new CompletableFuture<?>[4];
				for (int j = 0; j < batch.length; j++) {
					batch[j] = this.chain.tryConsume(scratch, this.limits, 1);
				}
				CompletableFuture.allOf(batch).orTimeout(60, TimeUnit.SECONDS).join();
			}
			this.chain.reset(scratch, this.limits).orTimeout(5, TimeUnit.SECONDS).join();
			return;
		}
		List<String> scratchKeys = new BucketKeys("acc").keysFor(scratch, this.limits);
		Flux.range(0, 2_000)
			.flatMap((i) -> this.redis.execute(this.script, scratchKeys, this.arguments).next(), 4)
			.blockLast(Duration.ofSeconds(60));
		this.redis.delete(scratchKeys.toArray(String[]::new)).block(Duration.ofSeconds(5));
	}

	/**
	 * Send checks at {@code ratePerSecond} from {@code startMicros + phaseMicros} until {@code startMicros +
	 * durationMicros}, then wait for the last answers.
	 * @return one sample per check, in sending order
	 */
	public List<Sample> run(long startMicros, long durationMicros, double ratePerSecond, long phaseMicros) {
		double intervalMicros = 1e6 / ratePerSecond;
		int count = (int) Math.max(0, Math.ceil((durationMicros - phaseMicros) / intervalMicros));
		AtomicReferenceArray<Sample> samples = new AtomicReferenceArray<>(count);
		CountDownLatch answered = new CountDownLatch(count);
		for (int j = 0; j < count; j++) {
			long due = startMicros + phaseMicros + (long) (j * intervalMicros);
			long wait = due - nowMicros();
			if (wait > 0) {
				LockSupport.parkNanos(wait * 1000);
			}
			int index = j;
			if (this.chain != null) {
				checkThroughChain(samples, answered, index);
				continue;
			}
			long sent = nowMicros();
			this.redis.execute(this.script, this.keys, this.arguments).next().subscribe((reply) -> {
				samples.set(index, new Sample(sent, nowMicros(), reply.get(reply.size() - 1), reply.get(0) == 1L,
						false));
				answered.countDown();
			}, (error) -> {
				samples.set(index, new Sample(sent, nowMicros(), -1, false, true));
				answered.countDown();
			});
		}
		try {
			answered.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		List<Sample> result = new ArrayList<>(count);
		for (int j = 0; j < count; j++) {
			Sample sample = samples.get(j);
			result.add((sample != null) ? sample : new Sample(0, 0, -1, false, true));
		}
		return result;
	}

	/**
	 * One check through the chain: the Redis time of a store decision comes from the {@link TimingExecutor}; a
	 * leased one is timed right after the chain answered it.
	 */
	private void checkThroughChain(AtomicReferenceArray<Sample> samples, CountDownLatch answered, int index) {
		long[] decidedAt = { -1 };
		long sent = nowMicros();
		CompletableFuture<RateLimitDecision> decision;
		TimingExecutor.DECIDED_AT.set(decidedAt);
		try {
			decision = this.chain.tryConsume(Plan.CLIENT, this.limits, 1);
		}
		finally {
			TimingExecutor.DECIDED_AT.remove();
		}
		long returned = nowMicros();
		decision.whenComplete((answer, error) -> {
			long recv = nowMicros();
			Sample sample;
			if (error != null || answer == null) {
				sample = new Sample(sent, recv, -1, false, true);
			}
			else if (answer.source() == RateLimitDecision.Source.LEASED) {
				sample = new Sample(sent, returned, returned, answer.allowed(), false, true);
			}
			else if (answer.source() != RateLimitDecision.Source.SHARED || decidedAt[0] < 0) {
				// not the store's answer, or no Redis time: not counted as a decision of the shared limiter
				sample = new Sample(sent, recv, -1, false, true);
			}
			else {
				sample = new Sample(sent, recv, decidedAt[0], answer.allowed(), false);
			}
			samples.set(index, sample);
			answered.countDown();
		});
	}

	@Override
	public void close() {
		if (this.leasing != null) {
			// as at the application's shutdown: the leases' unspent tokens go back, then the store stops
			this.leasing.stop();
			this.store.stop();
			this.store.destroy();
		}
		this.connectionFactory.destroy();
	}

	/**
	 * The wall clock in microseconds since the epoch (the clock Redis' TIME reads, on one machine).
	 * @return microseconds
	 */
	static long nowMicros() {
		Instant now = Instant.now();
		return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
	}

	/**
	 * Child JVM entry point.
	 * @param args redis URI, algorithm, capacity, window (ms), rate per second, phase (µs), duration (µs), output
	 * file; optionally lease budget (percent, 0 = off) and lease duration (ms)
	 * @throws IOException if the output cannot be written
	 */
	public static void main(String[] args) throws IOException {
		Plan plan = new Plan(Plan.parseAlgorithm(args[1]), Long.parseLong(args[2]),
				Duration.ofMillis(Long.parseLong(args[3])));
		double rate = Double.parseDouble(args[4]);
		long phase = Long.parseLong(args[5]);
		long duration = Long.parseLong(args[6]);
		Path out = Path.of(args[7]);
		Leases leases = (args.length > 9)
				? new Leases(Double.parseDouble(args[8]), Duration.ofMillis(Long.parseLong(args[9]))) : Leases.OFF;
		try (GatewayInstance instance = new GatewayInstance(args[0], plan, leases)) {
			instance.warmUp();
			System.out.println("READY");
			System.out.flush();
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line = in.readLine();
			if (line == null || !line.startsWith("START ")) {
				throw new IllegalStateException("expected START <epoch micros>, got " + line);
			}
			List<Sample> samples = instance.run(Long.parseLong(line.substring(6).trim()), duration, rate, phase);
			try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(out))) {
				for (Sample sample : samples) {
					writer.println(sample.toLine());
				}
			}
		}
		System.exit(0);
	}

	/**
	 * Between the store and its executor (leases only): runs the instrumented script, takes the Redis time off the
	 * end of each check's or lease's reply (so the store decodes the shipped reply) and writes it into the array the
	 * calling thread set in {@link #DECIDED_AT} while it called the chain (the chain calls the store on the caller's
	 * thread). Calls without one (a lease given back by the lease cache's expiry) are not timed.
	 */
	static final class TimingExecutor implements RedisScriptExecutor {

		/** Where the check being made on this thread wants its Redis time. */
		static final ThreadLocal<long[]> DECIDED_AT = new ThreadLocal<>();

		private final RedisScriptExecutor delegate;

		TimingExecutor(RedisScriptExecutor delegate) {
			this.delegate = delegate;
		}

		@Override
		public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
			long[] target = DECIDED_AT.get();
			return this.delegate.eval(script, keys, args).thenApply((reply) -> stripTime(reply, target));
		}

		/**
		 * A check's or lease's reply without its last value, the Redis time, which goes to {@code target}; a refund's
		 * one integer as it is.
		 */
		static List<Object> stripTime(List<Object> reply, long[] target) {
			if (reply == null || reply.size() < 2) {
				return reply;
			}
			if (target != null && reply.get(reply.size() - 1) instanceof Long time) {
				target[0] = time;
			}
			return reply.subList(0, reply.size() - 1);
		}

		@Override
		public CompletableFuture<Long> delete(byte[][] keys) {
			return this.delegate.delete(keys);
		}

		@Override
		public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
			return this.delegate.removeFromSortedSet(key, member);
		}

		@Override
		public void close() {
			this.delegate.close();
		}

	}

	/**
	 * One check.
	 * @param sendMicros when it was sent (wall clock, µs)
	 * @param recvMicros when its answer arrived
	 * @param redisMicros the Redis time the script decided at (-1 on error); for a check answered from a lease, the
	 * wall clock right after the chain answered it
	 * @param allowed whether it was admitted
	 * @param error whether it failed
	 * @param leased whether it was answered from a token lease, without a Redis call
	 */
	public record Sample(long sendMicros, long recvMicros, long redisMicros, boolean allowed, boolean error,
			boolean leased) {

		/**
		 * A check decided by Redis (or failed).
		 * @param sendMicros when it was sent
		 * @param recvMicros when its answer arrived
		 * @param redisMicros the Redis time the script decided at
		 * @param allowed whether it was admitted
		 * @param error whether it failed
		 */
		public Sample(long sendMicros, long recvMicros, long redisMicros, boolean allowed, boolean error) {
			this(sendMicros, recvMicros, redisMicros, allowed, error, false);
		}

		String toLine() {
			return this.sendMicros + " " + this.recvMicros + " " + this.redisMicros + " " + (this.allowed ? 1 : 0) + " "
					+ (this.error ? 1 : 0) + " " + (this.leased ? 1 : 0);
		}

		static Sample fromLine(String line) {
			String[] f = line.trim().split(" ");
			return new Sample(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), f[3].equals("1"),
					f[4].equals("1"), f.length > 5 && f[5].equals("1"));
		}

	}

}
