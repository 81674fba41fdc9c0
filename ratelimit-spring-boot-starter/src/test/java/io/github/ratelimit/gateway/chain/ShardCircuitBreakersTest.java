package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Per-shard breakers over a stub store whose shards are the first letter of the client id (pure logic). */
class ShardCircuitBreakersTest {

	private static final LimitDefinition LIMIT = new LimitDefinition("free-api", 10, 10, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("free", "api", List.of(LIMIT));

	private static final ClientKey ON_A = new ClientKey(ClientKey.Kind.IP, "a-192.0.2.1", "free");

	private static final ClientKey ON_B = new ClientKey(ClientKey.Kind.IP, "b-192.0.2.2", "free");

	private static final RateLimitDecision ALLOWED = RateLimitDecision.shared(LIMITS, true,
			List.of(new LimitStatus(LIMIT, true, 9, 0, 100)));

	/** The defaults of {@code ratelimit.circuit-breaker.*}. */
	private static final CircuitBreakerConfig CONFIG = CircuitBreakerConfig.custom()
		.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
		.slidingWindowSize(20)
		.minimumNumberOfCalls(5)
		.failureRateThreshold(50)
		.waitDurationInOpenState(Duration.ofMinutes(1))
		.permittedNumberOfCallsInHalfOpenState(3)
		.build();

	private static final StoreShards BY_FIRST_LETTER = new FirstLetterShards(Set.of("a", "b"), (error) -> false);

	/** Shards named by the first letter of the client id, with the given topology and reconnect refusals. */
	private record FirstLetterShards(Set<String> shards, Predicate<Throwable> refused) implements StoreShards {

		@Override
		public String shardOf(ClientKey client, PlanLimits limits) {
			return client.id().substring(0, 1);
		}

		@Override
		public boolean refusedWhileReconnecting(Throwable error) {
			return this.refused.test(error);
		}

	}

	private final CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();

	private final ShardCircuitBreakers breakers = new ShardCircuitBreakers(BY_FIRST_LETTER, this.registry,
			"ratelimit-redis", CONFIG, Duration.ofMillis(50));

	/** Shard a is down (every call fails); shard b answers. */
	private final AtomicInteger callsToA = new AtomicInteger();

	private final AtomicInteger refundsToA = new AtomicInteger();

	private final RateLimitStore store = new RateLimitStore() {
		@Override
		public CompletableFuture<RateLimitDecision> tryConsume(ClientKey client, PlanLimits limits, Cost cost) {
			return onShard(client, ShardCircuitBreakersTest.this.callsToA, ALLOWED);
		}

		@Override
		public CompletableFuture<Void> refund(ClientKey client, PlanLimits limits, Cost cost) {
			return onShard(client, ShardCircuitBreakersTest.this.refundsToA, null);
		}
	};

	/** A call to the stub's shards: a's are counted and fail, b's answer. */
	private static <T> CompletableFuture<T> onShard(ClientKey client, AtomicInteger callsToA, T answer) {
		if (client.id().startsWith("a")) {
			callsToA.incrementAndGet();
			return CompletableFuture.failedFuture(new IllegalStateException("shard a is down"));
		}
		return CompletableFuture.completedFuture(answer);
	}

	@AfterEach
	void close() {
		this.breakers.close();
	}

	@Test
	void aFailedShardOpensOnlyItsOwnBreaker() {
		ShardCircuitBreakers.GuardedStore guarded = this.breakers.guard(this.store);
		for (int i = 0; i < 10; i++) {
			assertThat(guarded.tryConsume(ON_A, LIMITS, 1)).isCompletedExceptionally();
			assertThat(guarded.tryConsume(ON_B, LIMITS, 1).join()).isEqualTo(ALLOWED);
		}
		assertThat(this.breakers.breaker("a").getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.breakers.breaker("b").getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		// open after the 5th failure: later calls to a are refused without reaching the store
		assertThat(this.callsToA.get()).isEqualTo(5);
		assertThatThrownBy(() -> guarded.tryConsume(ON_A, LIMITS, 1).join())
			.hasCauseInstanceOf(CallNotPermittedException.class);
		// refunds are sent whatever the breaker's state (the stub's shard a fails them), and not recorded
		int failedBefore = this.breakers.breaker("a").getMetrics().getNumberOfFailedCalls();
		assertThat(guarded.refund(ON_A, LIMITS, Cost.tokens(1))).isCompletedExceptionally();
		assertThat(this.refundsToA.get()).isEqualTo(1);
		assertThat(this.breakers.breaker("a").getMetrics().getNumberOfFailedCalls()).isEqualTo(failedBefore);
		assertThat(guarded.refund(ON_B, LIMITS, Cost.tokens(1))).isCompleted();
		assertThat(this.breakers.current()).containsOnlyKeys("a", "b");
	}

	@Test
	void breakersAreNamedPerShardInTheRegistry() {
		assertThat(this.registry.find("ratelimit-redis")).isPresent(); // the single shard's, from the start
		this.breakers.guard(this.store).tryConsume(ON_B, LIMITS, 1).join();
		assertThat(this.registry.find("ratelimit-redis@b")).containsSame(this.breakers.breaker("b"));
		assertThat(this.breakers.isSharded()).isTrue();
		ShardCircuitBreakers single = new ShardCircuitBreakers(null, this.registry, "other", CONFIG,
				Duration.ofMillis(50));
		try {
			assertThat(single.isSharded()).isFalse();
			assertThat(single.current()).containsOnlyKeys(StoreShards.SINGLE_SHARD);
			assertThat(single.current().get(StoreShards.SINGLE_SHARD).getName()).isEqualTo("other");
		}
		finally {
			single.close();
		}
	}

	@Test
	void theClosedBreakersOfDepartedMastersAreDroppedWhenANewOneAppears() {
		Set<String> topology = new java.util.concurrent.CopyOnWriteArraySet<>(Set.of("a", "b"));
		StoreShards moving = new FirstLetterShards(topology, (error) -> false);
		ShardCircuitBreakers moved = new ShardCircuitBreakers(moving, this.registry, "moving", CONFIG,
				Duration.ofMillis(50));
		try {
			ShardCircuitBreakers.GuardedStore guarded = moved.guard(this.store);
			guarded.tryConsume(ON_B, LIMITS, 1).join();
			for (int i = 0; i < 5; i++) {
				guarded.tryConsume(ON_A, LIMITS, 1);
			}
			assertThat(moved.breaker("a").getState()).isEqualTo(CircuitBreaker.State.OPEN);
			// b and a leave the topology, c arrives: b's closed breaker goes (from the registry too), a's open one stays
			topology.clear();
			topology.add("c");
			guarded.tryConsume(new ClientKey(ClientKey.Kind.IP, "c-192.0.2.3", "free"), LIMITS, 1).join();
			assertThat(this.registry.find("moving@b")).isEmpty();
			assertThat(this.registry.find("moving@a")).isPresent();
			assertThat(this.registry.find("moving@c")).isPresent();
			assertThat(moved.current()).containsOnlyKeys("c");
		}
		finally {
			moved.close();
		}
	}

	@Test
	void aCallWithNoAnswerWithinTheTimeoutCountsAsFailedOnce() {
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		ShardCircuitBreakers.GuardedStore guarded = this.breakers.guard((client, limits, cost) -> answer);
		CompletableFuture<RateLimitDecision> call = guarded.tryConsume(ON_B, LIMITS, 1);
		CircuitBreaker breaker = this.breakers.breaker("b");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1));
		assertThat(call).isNotDone(); // the guard only counts; the layers above time the request out
		answer.complete(ALLOWED);
		assertThat(call.join()).isEqualTo(ALLOWED);
		assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
		assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).isZero();
	}

	/**
	 * The relapse of the failure issue's closing note: an outage of 4 failed calls (fewer than the 5 minimum) leaves
	 * the breaker closed; Resilience4j alone then opens it on the first success after Redis is back (4 of 5 failed).
	 */
	@Test
	void theFirstSuccessAfterAShortOutageDoesNotOpenTheBreaker() {
		CircuitBreaker plain = CircuitBreaker.of("plain", CONFIG);
		for (int i = 0; i < 4; i++) {
			plain.onError(1, java.util.concurrent.TimeUnit.MILLISECONDS, new IllegalStateException("down"));
		}
		plain.onSuccess(1, java.util.concurrent.TimeUnit.MILLISECONDS);
		assertThat(plain.getState()).as("Resilience4j on its own").isEqualTo(CircuitBreaker.State.OPEN);

		ShardCircuitBreakers.GuardedStore guarded = this.breakers.guard(this.store);
		for (int i = 0; i < 4; i++) {
			assertThat(guarded.tryConsume(ON_A, LIMITS, 1)).isCompletedExceptionally();
		}
		CircuitBreaker breaker = this.breakers.breaker("a");
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		RateLimitStore back = (client, limits, cost) -> CompletableFuture.completedFuture(ALLOWED);
		assertThat(this.breakers.guard(back).tryConsume(ON_A, LIMITS, 1).join()).isEqualTo(ALLOWED);
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("the outage's failures are forgotten").isZero();
		assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
	}

	@Test
	void failuresStillOpenTheBreakerAndASuccessBelowTheThresholdKeepsThem() {
		RateLimitStore back = (client, limits, cost) -> CompletableFuture.completedFuture(ALLOWED);
		ShardCircuitBreakers.GuardedStore down = this.breakers.guard(this.store);
		ShardCircuitBreakers.GuardedStore up = this.breakers.guard(back);
		CircuitBreaker breaker = this.breakers.breaker("a");
		// 3 successes, 2 failures: 40%, below the threshold; a success keeps the failures on record
		for (int i = 0; i < 3; i++) {
			up.tryConsume(ON_A, LIMITS, 1).join();
		}
		down.tryConsume(ON_A, LIMITS, 1);
		down.tryConsume(ON_A, LIMITS, 1);
		up.tryConsume(ON_A, LIMITS, 1).join();
		assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(2);
		// then failures: the breaker opens on a failure, at 50% of the calls
		down.tryConsume(ON_A, LIMITS, 1);
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		down.tryConsume(ON_A, LIMITS, 1);
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThatThrownBy(() -> up.tryConsume(ON_A, LIMITS, 1).join()).isInstanceOf(CompletionException.class)
			.hasCauseInstanceOf(CallNotPermittedException.class);
	}

	/**
	 * Recovery after a long outage: half-open, calls the store's client refuses unsent while it reconnects are not
	 * the trial (the breaker stays half-open and lets later calls through); the first calls sent once the connection
	 * is back decide. Closed, such refusals count as failures like any other.
	 */
	@Test
	void aHalfOpenBreakerDoesNotTakeACallRefusedWhileReconnectingAsItsTrial() {
		class NotConnected extends IllegalStateException {
			NotConnected() {
				super("Currently not connected. Commands are rejected.");
			}
		}
		StoreShards reconnecting = new FirstLetterShards(Set.of("a", "b"), NotConnected.class::isInstance);
		java.util.concurrent.atomic.AtomicBoolean connected = new java.util.concurrent.atomic.AtomicBoolean();
		AtomicInteger sent = new AtomicInteger();
		RateLimitStore store = (client, limits, cost) -> {
			sent.incrementAndGet();
			return connected.get() ? CompletableFuture.completedFuture(ALLOWED)
					: CompletableFuture.failedFuture(new CompletionException(new NotConnected()));
		};
		ShardCircuitBreakers reconnectingBreakers = new ShardCircuitBreakers(reconnecting, this.registry,
				"reconnecting", CONFIG, Duration.ofSeconds(5));
		try {
			ShardCircuitBreakers.GuardedStore guarded = reconnectingBreakers.guard(store);
			CircuitBreaker breaker = reconnectingBreakers.breaker("b");
			// closed: refusals count, and open the breaker after the minimum number of calls
			for (int i = 0; i < 5; i++) {
				assertThat(guarded.tryConsume(ON_B, LIMITS, 1)).isCompletedExceptionally();
			}
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
			breaker.transitionToHalfOpenState(); // the wait in the open state has passed
			sent.set(0);
			for (int i = 0; i < 10; i++) {
				assertThatThrownBy(() -> guarded.tryConsume(ON_B, LIMITS, 1).join())
					.hasCauseInstanceOf(NotConnected.class);
			}
			// all 10 reached the store's client (3 permits, each given back), none counted
			assertThat(sent.get()).isEqualTo(10);
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
			assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
			connected.set(true);
			for (int i = 0; i < 3; i++) {
				assertThat(guarded.tryConsume(ON_B, LIMITS, 1).join()).isEqualTo(ALLOWED);
			}
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		}
		finally {
			reconnectingBreakers.close();
		}
	}


	/**
	 * The store holds several connections to a shard (one per server event loop besides a shared one), each
	 * reconnecting on its own: once one is back and trials on it close the breaker, calls refused on the others (still
	 * reconnecting) fail but are not counted, so the breaker does not re-open; once no connection is established,
	 * refusals count again.
	 */
	@Test
	void aCallRefusedWhileAnotherConnectionToTheShardIsEstablishedIsNotCounted() {
		class NotConnected extends IllegalStateException {
			NotConnected() {
				super("Currently not connected. Commands are rejected.");
			}
		}
		java.util.concurrent.atomic.AtomicBoolean anotherConnected = new java.util.concurrent.atomic.AtomicBoolean();
		StoreShards twoConnections = new FirstLetterShards(Set.of("a", "b"), NotConnected.class::isInstance);
		StoreShards reconnecting = new StoreShards() {
			@Override
			public String shardOf(ClientKey client, PlanLimits limits) {
				return twoConnections.shardOf(client, limits);
			}

			@Override
			public Set<String> shards() {
				return twoConnections.shards();
			}

			@Override
			public boolean refusedWhileReconnecting(Throwable error) {
				return twoConnections.refusedWhileReconnecting(error);
			}

			@Override
			public boolean connectedTo(String shard) {
				return "b".equals(shard) && anotherConnected.get();
			}
		};
		// calls alternate between the connection that is back and one still reconnecting
		AtomicInteger sent = new AtomicInteger();
		RateLimitStore store = (client, limits, cost) -> (anotherConnected.get() && sent.incrementAndGet() % 2 == 0)
				? CompletableFuture.completedFuture(ALLOWED)
				: CompletableFuture.failedFuture(new CompletionException(new NotConnected()));
		ShardCircuitBreakers reconnectingBreakers = new ShardCircuitBreakers(reconnecting, this.registry,
				"several-connections", CONFIG, Duration.ofSeconds(5));
		try {
			ShardCircuitBreakers.GuardedStore guarded = reconnectingBreakers.guard(store);
			CircuitBreaker breaker = reconnectingBreakers.breaker("b");
			// Redis down, no connection established: refusals count and open the breaker
			for (int i = 0; i < 5; i++) {
				assertThat(guarded.tryConsume(ON_B, LIMITS, 1)).isCompletedExceptionally();
			}
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
			// one connection is back: the breaker goes half-open, the calls on it close it
			anotherConnected.set(true);
			breaker.transitionToHalfOpenState();
			for (int i = 0; i < 6; i++) {
				guarded.tryConsume(ON_B, LIMITS, 1);
			}
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
			// the other connection still refuses half the calls: they fail, uncounted, and the breaker stays closed
			int refused = 0;
			for (int i = 0; i < 20; i++) {
				refused += guarded.tryConsume(ON_B, LIMITS, 1).isCompletedExceptionally() ? 1 : 0;
			}
			assertThat(refused).isEqualTo(10);
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
			assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
			// every connection down again: refusals count
			anotherConnected.set(false);
			for (int i = 0; i < 20; i++) {
				assertThat(guarded.tryConsume(ON_B, LIMITS, 1)).isCompletedExceptionally();
			}
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		}
		finally {
			reconnectingBreakers.close();
		}
	}

}
