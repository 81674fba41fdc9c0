package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.test.redis.RedisServer;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Transports;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The rate limit script calls of one event loop turn go out as one script run ({@link LoopTurnBatch}, the script's
 * {@code 'batch'} operation), against a redis-server of its own (whose command counts are the test's alone): the
 * calls of one turn are one EVALSHA, each gets the reply it would get alone, in order (a later call sees an earlier
 * one's writes), a call's own error fails that call only, and an integer reply (a refund) comes back as a one-element
 * list; and at the edges: after SCRIPT FLUSH, with more than {@link LoopTurnBatch#MAX_CALLS} calls in a turn, when one
 * call raises a script error, and across a stop and start of the store and its connection factory.
 */
class LoopTurnBatchTest {

	private static final Pattern EVALSHA_CALLS = Pattern.compile("cmdstat_evalsha:calls=(\\d+)");

	private final PlanLimits limits = new PlanLimits("free", "search",
			List.of(new LimitDefinition("free-search", 3, 3, Duration.ofMinutes(1))));

	private final DefaultClientResources resources = DefaultClientResources.create();

	private RedisServer redis;

	private MultiThreadIoEventLoopGroup loops;

	private EventLoop loop;

	private LettuceConnectionFactory application;

	private LimiterConnectionFactory limiter;

	private LettuceScriptExecutor executor;

	private RedisRateLimitStore store;

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.loops = new MultiThreadIoEventLoopGroup(1,
				(Transports.socketChannelClass() == EpollSocketChannel.class && Epoll.isAvailable())
						? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
		this.loop = (EventLoop) this.loops.next();
		this.application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()),
				LettuceClientConfiguration.builder().clientResources(this.resources).build());
		this.application.afterPropertiesSet();
		this.limiter = LimiterConnectionFactory.copyOf(this.application,
				new ClusterTopologyRefreshCustomizer(null, false, false));
		this.limiter.afterPropertiesSet();
		Map<EventLoop, LettuceConnectionFactory> onLoop = this.limiter.onEventLoops(List.of(this.loop));
		assertThat(onLoop).hasSize(1);
		// the loop also takes the calls of other threads (as one of the client's own loops does for Server MVC)
		this.executor = new LettuceScriptExecutor((LettuceConnectionFactory) this.limiter.getConnectionFactory(),
				() -> onLoop, this.loop);
		this.store = new RedisRateLimitStore(this.executor, new BucketKeys("rl"));
		// the loop's connection opens in the background: wait until a check made on the loop is answered on it
		await().atMost(Duration.ofSeconds(20)).until(() -> this.<Boolean>onLoop((store) -> {
			Thread asker = Thread.currentThread();
			return store.tryConsume(client("warm"), this.limits, 0).thenApply((decision) -> asker)
				.thenApply((answeredBy) -> answeredBy == Thread.currentThread());
		}).get(0));
	}

	@AfterEach
	void stop() throws Exception {
		this.store.destroy();
		this.limiter.destroy();
		this.application.destroy();
		this.resources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
		this.loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
		this.redis.close();
	}

	@Test
	void theChecksOfOneTurnAreOneScriptRunAndEachGetsItsOwnDecisionInOrder() throws Exception {
		long before = evalshaCalls();
		List<RateLimitDecision> decisions = this.<RateLimitDecision>onLoop((store) -> {
			List<CompletableFuture<RateLimitDecision>> checks = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				checks.add(store.tryConsume(client("one"), this.limits, 1));
			}
			checks.add(store.tryConsume(client("two"), this.limits, 1));
			return checks;
		});
		assertThat(evalshaCalls() - before).isEqualTo(1);
		assertThat(decisions).extracting(RateLimitDecision::allowed)
			.containsExactly(true, true, true, false, false, true);
		assertThat(decisions.get(2).statuses().get(0).remaining()).isZero();
		assertThat(decisions.get(5).statuses().get(0).remaining()).isEqualTo(2);
		assertThat(decisions.get(3).retryAfterMillis()).isEqualTo(20_000);
	}

	@Test
	void aCallsOwnErrorFailsThatCallOnlyAndAnIntegerReplyIsAOneElementList() throws Exception {
		LuaScript script = LuaScript.rateLimit();
		byte[][] key = { bytes("rl:{x}:a") };
		byte[][] check = { bytes("check"), bytes("1"), bytes("0"), bytes("tb"), bytes("5"), bytes("5"), bytes("60000000"),
				bytes("1") };
		byte[][] refund = { bytes("refund"), bytes("1"), bytes("tb"), bytes("5"), bytes("5"), bytes("60000000"),
				bytes("1") };
		byte[][] malformed = { bytes("check"), bytes("1"), bytes("0"), bytes("1") };
		List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
		CompletableFuture<Void> sent = new CompletableFuture<>();
		this.loop.execute(() -> {
			replies.add(this.executor.eval(script, key, check));
			replies.add(this.executor.eval(script, key, malformed));
			replies.add(this.executor.eval(script, key, refund));
			sent.complete(null);
		});
		sent.get(10, TimeUnit.SECONDS);
		assertThat(replies.get(0).get(10, TimeUnit.SECONDS)).startsWith(1L, 1L, 4L);
		assertThatThrownBy(() -> replies.get(1).get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
			.cause()
			.isInstanceOf(RedisCommandExecutionException.class)
			.hasMessageContaining("takes 3 + 5n arguments");
		assertThat(replies.get(2).get(10, TimeUnit.SECONDS)).containsExactly(1L);
		// the refund gave the check's token back: the next check leaves 4 of 5 again
		assertThat(this.executor.eval(script, key, check).get(10, TimeUnit.SECONDS)).startsWith(1L, 1L, 4L);
	}

	@Test
	void callsOfOtherThreadsMadeBeforeTheLoopsNextTurnAreOneScriptRun() throws Exception {
		CountDownLatch busy = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		this.loop.execute(() -> { // the loop's turn lasts until the calls are made
			busy.countDown();
			awaitUninterruptibly(release);
		});
		assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
		long before = evalshaCalls();
		List<CompletableFuture<RateLimitDecision>> checks = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			checks.add(this.store.tryConsume(client("other"), this.limits, 1).toCompletableFuture());
		}
		release.countDown();
		List<Boolean> allowed = new ArrayList<>();
		for (CompletableFuture<RateLimitDecision> check : checks) {
			allowed.add(check.get(10, TimeUnit.SECONDS).allowed());
		}
		assertThat(allowed).containsExactly(true, true, true, false);
		assertThat(evalshaCalls() - before).isEqualTo(1);
	}

	@Test
	void aBatchSurvivesScriptFlush() throws Exception {
		this.redis.command("SCRIPT", "FLUSH");
		List<RateLimitDecision> decisions = this.<RateLimitDecision>onLoop((store) -> {
			List<CompletableFuture<RateLimitDecision>> checks = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				checks.add(store.tryConsume(client("flushed"), this.limits, 1));
			}
			return checks;
		});
		assertThat(decisions).extracting(RateLimitDecision::allowed).containsExactly(true, true, true, false);
	}

	@Test
	void moreCallsThanOneRunTakesAreAllDecidedInOrder() throws Exception {
		int calls = 2 * LoopTurnBatch.MAX_CALLS + 3;
		List<RateLimitDecision> decisions = this.<RateLimitDecision>onLoop((store) -> {
			List<CompletableFuture<RateLimitDecision>> checks = new ArrayList<>();
			for (int i = 0; i < calls; i++) {
				checks.add(store.tryConsume(client("many" + (i % 7)), this.limits, 1));
			}
			return checks;
		});
		for (int i = 0; i < calls; i++) {
			assertThat(decisions.get(i).allowed()).as("call %d", i).isEqualTo(i < 21);
		}
	}

	/**
	 * The class's contract: each call gets "what the script answers that call alone, or that call's own error
	 * reply". A script error raised by one call (here a write refused under maxmemory, as an ACL refusal or any
	 * redis.call error would be) aborts the whole run: a read-only call batched before it, which alone is answered,
	 * fails with the other call's error.
	 */
	@Test
	void anErrorRaisedByOneCallFailsOnlyThatCall() throws Exception {
		LuaScript script = LuaScript.rateLimit();
		byte[][] read = { bytes("check"), bytes("1"), bytes("0"), bytes("tb"), bytes("5"), bytes("5"), bytes("60000000"),
				bytes("0") };
		byte[][] consume = { bytes("check"), bytes("1"), bytes("0"), bytes("tb"), bytes("5"), bytes("5"), bytes("60000000"),
				bytes("1") };
		this.redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
		this.redis.command("CONFIG", "SET", "maxmemory", "1");
		try {
			// alone, the read is answered
			assertThat(this.executor.eval(script, new byte[][] { bytes("rl:{r}:a") }, read).get(10, TimeUnit.SECONDS))
				.startsWith(1L, 1L, 5L);
			List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
			CompletableFuture<Void> sent = new CompletableFuture<>();
			this.loop.execute(() -> {
				replies.add(this.executor.eval(script, new byte[][] { bytes("rl:{r}:a") }, read));
				replies.add(this.executor.eval(script, new byte[][] { bytes("rl:{w}:a") }, consume));
				sent.complete(null);
			});
			sent.get(10, TimeUnit.SECONDS);
			assertThatThrownBy(() -> replies.get(1).get(10, TimeUnit.SECONDS)).hasMessageContaining("OOM");
			assertThat(replies.get(0).get(10, TimeUnit.SECONDS)).startsWith(1L, 1L, 5L);
		}
		finally {
			this.redis.command("CONFIG", "SET", "maxmemory", "0");
		}
	}

	/**
	 * As a context stops: the store (phase + 1) suspends its connections, then a request still in flight makes a
	 * call, then the factory stops; both start again. The call in between is refused at once (the chain's fallback
	 * decides it) and opens no connection from the client about to be shut down, which would stay behind, closed,
	 * after the start; checks made after the start are decided by Redis again.
	 */
	@Test
	void aCallBetweenTheStoresStopAndTheFactorysStopIsRefusedAndLeavesNoDeadConnectionAfterStart()
			throws Exception {
		this.store.stop();
		await().atMost(Duration.ofSeconds(10)).until(() -> clientCount() == 0);
		assertThatThrownBy(() -> this.<RateLimitDecision>onLoop(
				(store) -> store.tryConsume(client("in-flight"), this.limits, 1)))
			.hasRootCauseMessage("The rate limiter's Redis connection is stopped");
		assertThat(clientCount()).isZero();
		this.limiter.stop();
		this.limiter.start();
		this.store.start();
		await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> {
			RateLimitDecision decision = this.<RateLimitDecision>onLoop(
					(store) -> store.tryConsume(client("after-" + System.nanoTime()), this.limits, 1))
				.get(0);
			assertThat(decision.source()).isEqualTo(RateLimitDecision.Source.SHARED);
		});
	}

	@Test
	void stopAndStartKeepTheConnectionCount() throws Exception {
		await().atMost(Duration.ofSeconds(10)).until(() -> clientCount() == 2); // shared, and the loop's
		for (int cycle = 0; cycle < 3; cycle++) {
			this.store.stop();
			this.limiter.stop();
			this.limiter.start();
			this.store.start();
			await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> {
				Thread[] asker = new Thread[1];
				Thread answerer = this.<Thread>onLoop((store) -> {
					asker[0] = Thread.currentThread();
					return store.tryConsume(client("cycle-" + System.nanoTime()), this.limits, 1)
						.thenApply((decision) -> Thread.currentThread());
				}).get(0);
				assertThat(answerer).isSameAs(asker[0]);
			});
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> clientCount() == 2);
	}

	private int clientCount() {
		return (int) this.redis.command("CLIENT", "LIST").lines().count() - 1; // less this command's own client
	}

	@Test
	void aBatchWhoseCountsDoNotAddUpIsAnErrorBeforeAnyCallRuns() {
		String script = LuaScript.rateLimit().text();
		String[] check = { "check", "1", "0", "tb", "5", "5", "60000000", "1" };
		// a negative key count (the second call would read the first call's key), a fractional one, and counts
		// that leave a key unread
		assertThatThrownBy(() -> this.redis.command(concat(new String[] { "EVAL", script, "1", "rl:{h}:a",
				"batch", "2", "1", "8", "-1", "8" }, check, check)))
			.hasMessageContaining("takes a whole key count");
		assertThatThrownBy(() -> this.redis.command(concat(new String[] { "EVAL", script, "1", "rl:{h}:a",
				"batch", "1", "0.5", "8" }, check)))
			.hasMessageContaining("takes a whole key count");
		assertThatThrownBy(() -> this.redis.command(concat(new String[] { "EVAL", script, "2", "rl:{h}:a",
				"rl:{h}:b", "batch", "1", "1", "8" }, check)))
			.hasMessageContaining("add up to 1 keys and 12 arguments, got 2 and 12");
		assertThat(this.redis.command("EXISTS", "rl:{h}:a", "rl:{h}:b")).isEqualTo("0");
	}

	private static String[] concat(String[]... parts) {
		return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
	}

	private static void awaitUninterruptibly(CountDownLatch latch) {
		try {
			latch.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** What a task run on the loop gives, its futures' results gathered. */
	private <T> List<T> onLoop(Function<RedisRateLimitStore, Object> task) throws Exception {
		CompletableFuture<List<CompletableFuture<T>>> started = new CompletableFuture<>();
		this.loop.execute(() -> {
			Object made = task.apply(this.store);
			@SuppressWarnings("unchecked")
			List<CompletableFuture<T>> futures = (made instanceof List<?> list) ? (List<CompletableFuture<T>>) list
					: List.of(((java.util.concurrent.CompletionStage<T>) made).toCompletableFuture());
			started.complete(futures);
		});
		List<T> results = new ArrayList<>();
		for (CompletableFuture<T> future : started.get(10, TimeUnit.SECONDS)) {
			results.add(future.get(10, TimeUnit.SECONDS));
		}
		return results;
	}

	private long evalshaCalls() {
		Matcher calls = EVALSHA_CALLS.matcher(this.redis.command("INFO", "commandstats"));
		return calls.find() ? Long.parseLong(calls.group(1)) : 0;
	}

	private static ClientKey client(String id) {
		return new ClientKey(ClientKey.Kind.API_KEY, id, "free");
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
