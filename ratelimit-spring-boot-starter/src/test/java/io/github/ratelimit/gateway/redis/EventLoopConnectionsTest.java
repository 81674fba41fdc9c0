package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Transports;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.EventExecutor;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The store's connections on a server's event loops ({@link LimiterConnectionFactory#onEventLoops},
 * {@link LettuceScriptExecutor}), against a real Redis: a check made on a loop's thread is answered on that same
 * thread (no other thread woken), each loop has its own connection, a check from any other thread still goes out on
 * the shared connection, and loops of another transport than Lettuce's are not used.
 */
@ExtendWith(RedisExtension.class)
class EventLoopConnectionsTest {

	private final PlanLimits limits = new PlanLimits("free", "search",
			List.of(new LimitDefinition("free-search", 1000, 1000, Duration.ofMinutes(1))));

	private final DefaultClientResources applicationResources = DefaultClientResources.create();

	/** Names this test's clients in CLIENT LIST (the Redis may be shared with other tests). */
	private final String clientName = "elc-" + java.util.UUID.randomUUID();

	private MultiThreadIoEventLoopGroup serverLoops;

	private LettuceConnectionFactory application;

	private LimiterConnectionFactory limiter;

	@BeforeEach
	void start(TestRedis redis) {
		this.serverLoops = new MultiThreadIoEventLoopGroup(2, lettucesTransport());
		this.application = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()),
				LettuceClientConfiguration.builder()
					.clientResources(this.applicationResources)
					.clientName(this.clientName)
					.build());
		this.application.afterPropertiesSet();
		this.limiter = LimiterConnectionFactory.copyOf(this.application,
				new ClusterTopologyRefreshCustomizer(null, false, false));
		this.limiter.afterPropertiesSet();
	}

	@AfterEach
	void stop() throws Exception {
		this.limiter.destroy();
		this.application.destroy();
		this.applicationResources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
		this.serverLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
	}

	@Test
	void aCheckMadeOnAnEventLoopIsAnsweredOnThatLoopsThreadOverAConnectionOfItsOwn(TestRedis redis)
			throws Exception {
		List<EventLoop> loops = loops(this.serverLoops);
		Map<EventLoop, LettuceConnectionFactory> onLoops = this.limiter.onEventLoops(loops);
		assertThat(onLoops).containsOnlyKeys(loops);
		assertThat(this.limiter.onEventLoops(loops)).isEqualTo(onLoops); // asked again: the same copies
		RedisRateLimitStore store = new RedisRateLimitStore(
				new LettuceScriptExecutor((LettuceConnectionFactory) this.limiter.getConnectionFactory(), () -> onLoops,
						null),
				new BucketKeys("rl"));
		try {
			for (EventLoop loop : loops) {
				ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, "on-" + loop.hashCode(), "free");
				// the loop's connection opens in the background: until then a check goes out on the shared one
				await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
					Answer answer = checkOn(loop, store, client);
					assertThat(answer.decision().allowed()).isTrue();
					assertThat(answer.answeredOn()).isSameAs(answer.askedOn());
				});
			}
			// the shared connection and one per loop
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(clients(redis)).isEqualTo(1 + loops.size()));
			// connected to the shard (a breaker does not count a refusal of a connection still reconnecting)
			assertThat(store.connectedTo(StoreShards.SINGLE_SHARD)).isTrue();
			// from another thread: the shared connection, answered on one of Lettuce's own threads
			AtomicReference<Thread> answeredOn = new AtomicReference<>();
			RateLimitDecision decision = store.tryConsume(new ClientKey(ClientKey.Kind.API_KEY, "main", "free"),
					this.limits, 1)
				.whenComplete((answer, error) -> answeredOn.set(Thread.currentThread()))
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS);
			assertThat(decision.allowed()).isTrue();
			assertThat(loops).noneMatch((loop) -> loop.inEventLoop(answeredOn.get()));
		}
		finally {
			store.destroy();
		}
		assertThat(store.connectedTo(StoreShards.SINGLE_SHARD)).isFalse();
	}

	@Test
	void askedForOtherLoopsTheFactoryKeepsTheCopiesOfLoopsStillGivenAndDestroysTheOthers() {
		List<EventLoop> loops = loops(this.serverLoops);
		Map<EventLoop, LettuceConnectionFactory> both = this.limiter.onEventLoops(loops);
		Map<EventLoop, LettuceConnectionFactory> first = this.limiter.onEventLoops(loops.subList(0, 1));
		assertThat(first).containsOnlyKeys(loops.get(0));
		assertThat(first.get(loops.get(0))).isSameAs(both.get(loops.get(0)));
		LettuceConnectionFactory dropped = both.get(loops.get(1));
		assertThat(dropped.isRunning()).isFalse();
		assertThatIllegalStateException().isThrownBy(dropped::getConnection);
		Map<EventLoop, LettuceConnectionFactory> again = this.limiter.onEventLoops(loops);
		assertThat(again.get(loops.get(1))).isNotSameAs(dropped);
		assertThat(again.get(loops.get(1)).getConnection().ping()).isEqualTo("PONG");
	}

	@Test
	void stoppingTheStoreThenTheFactoryClosesEveryConnectionOnce() throws Exception {
		List<EventLoop> loops = loops(this.serverLoops);
		RedisRateLimitStore store = new RedisRateLimitStore(
				new LettuceScriptExecutor((LettuceConnectionFactory) this.limiter.getConnectionFactory(),
						() -> this.limiter.onEventLoops(loops), null),
				new BucketKeys("rl"));
		for (EventLoop loop : loops) {
			ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, "stop-" + loop.hashCode(), "free");
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				Answer answer = checkOn(loop, store, client);
				assertThat(answer.answeredOn()).isSameAs(answer.askedOn()); // the loop's connection is open
			});
		}
		Logger lettuce = (Logger) LoggerFactory.getLogger("io.lettuce.core.RedisChannelHandler");
		ListAppender<ILoggingEvent> logged = new ListAppender<>();
		logged.start();
		lettuce.addAppender(logged);
		try {
			// as a context stops them: the store (and its executor) one phase before the connection factory
			store.stop();
			this.limiter.stop();
		}
		finally {
			lettuce.detachAppender(logged);
			store.destroy();
		}
		assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage)
			.noneMatch((message) -> message.contains("already closed"));
	}

	/**
	 * Review of issue 29: the loops' connections made by a {@link LettuceScriptExecutor#start()} (the server's loops
	 * known only then, or new after a restart) report their connects to the listeners added before, as the
	 * connections made at creation do (the store's circuit breakers go half-open on them).
	 */
	@Test
	void connectionsOnLoopsGivenAtStartReportTheirConnectsToListenersAddedBefore() throws Exception {
		List<EventLoop> loops = loops(this.serverLoops);
		AtomicReference<List<EventLoop>> given = new AtomicReference<>(List.of());
		LettuceScriptExecutor executor = new LettuceScriptExecutor(
				(LettuceConnectionFactory) this.limiter.getConnectionFactory(),
				() -> this.limiter.onEventLoops(given.get()), null);
		RedisRateLimitStore store = new RedisRateLimitStore(executor, new BucketKeys("rl"));
		List<Thread> connectedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
		try (AutoCloseable listening = executor.onConnected((shard) -> connectedOn.add(Thread.currentThread()))) {
			given.set(loops); // the server's loops, known at start (made by the server's resource factory then)
			executor.start();
			for (EventLoop loop : loops) {
				ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, "started-" + loop.hashCode(), "free");
				await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
					Answer answer = checkOn(loop, store, client);
					assertThat(answer.answeredOn()).isSameAs(answer.askedOn()); // the loop's connection is open
				});
			}
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(loops).allMatch(
						(loop) -> connectedOn.stream().anyMatch(loop::inEventLoop), "a loop whose connect was reported"));
		}
		finally {
			store.destroy();
		}
	}

	@Test
	void loopsOfAnotherTransportThanLettucesAreNotUsed() throws Exception {
		assumeThat(Transports.socketChannelClass()).isEqualTo(EpollSocketChannel.class);
		MultiThreadIoEventLoopGroup nio = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
		try {
			assertThat(this.limiter.onEventLoops(loops(nio))).isEmpty();
		}
		finally {
			nio.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
		}
	}

	@Test
	void aSharedFactoryHasNoCopiesOnLoops() {
		LimiterConnectionFactory shared = LimiterConnectionFactory.sharing(this.application);
		assertThat(shared.onEventLoops(loops(this.serverLoops))).isEmpty();
	}

	private record Answer(RateLimitDecision decision, Thread askedOn, Thread answeredOn) {
	}

	private Answer checkOn(EventLoop loop, RedisRateLimitStore store, ClientKey client) throws Exception {
		CompletableFuture<Answer> answer = new CompletableFuture<>();
		loop.execute(() -> {
			Thread askedOn = Thread.currentThread();
			store.tryConsume(client, this.limits, 1).whenComplete((decision, error) -> {
				if (error != null) {
					answer.completeExceptionally(error);
				}
				else {
					answer.complete(new Answer(decision, askedOn, Thread.currentThread()));
				}
			});
		});
		return answer.get(10, TimeUnit.SECONDS);
	}

	private int clients(TestRedis redis) {
		return (int) redis.command("CLIENT", "LIST")
			.lines()
			.filter((line) -> line.contains(" name=" + this.clientName + " "))
			.count();
	}

	private static List<EventLoop> loops(MultiThreadIoEventLoopGroup group) {
		List<EventLoop> loops = new ArrayList<>();
		for (EventExecutor executor : group) {
			loops.add((EventLoop) executor);
		}
		return loops;
	}

	/** The transport Lettuce uses: native epoll when available, as a Reactor Netty server would on Linux. */
	private static IoHandlerFactory lettucesTransport() {
		return (Transports.socketChannelClass() == EpollSocketChannel.class && Epoll.isAvailable())
				? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
	}

}
