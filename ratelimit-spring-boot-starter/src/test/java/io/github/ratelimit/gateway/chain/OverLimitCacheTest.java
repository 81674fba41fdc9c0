package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class OverLimitCacheTest {

	private static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.API_KEY, "h", "free");

	private static final LimitDefinition LIMIT = new LimitDefinition("free-a", 2, 1, Duration.ofMinutes(1));

	private static final PlanLimits LIMITS = new PlanLimits("free", "a", List.of(LIMIT));

	private static final RateLimitDecision DENIED = RateLimitDecision.shared(LIMITS, false,
			List.of(new LimitStatus(LIMIT, false, 0, 30_000, 90_000)));

	private final AtomicInteger checks = new AtomicInteger();

	private final OverLimitCache cache = new OverLimitCache((request) -> {
		this.checks.incrementAndGet();
		return CompletableFuture.completedFuture(DENIED);
	}, 100, CheckListener.NONE);

	@Test
	void remembersADenialUntilItsRetryAfterWithTheTimeElapsedTakenOff() {
		long start = System.nanoTime();
		this.cache.remember(CLIENT, LIMITS, Cost.tokens(1), start, DENIED);
		RateLimitDecision later = this.cache.lookup(CLIENT, LIMITS, Cost.tokens(1), start + 10_000_000_000L);
		assertThat(later.source()).isEqualTo(RateLimitDecision.Source.CACHED);
		assertThat(later.allowed()).isFalse();
		assertThat(later.retryAfterMillis()).isEqualTo(20_000);
		assertThat(later.statuses().get(0).resetMillis()).isEqualTo(80_000);
		// never past the retry-after (less 1 ms for the script's rounding up)
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(1), start + 29_999_000_000L)).isNull();
	}

	@Test
	void onlyTheSameCostAndLimitsAreAnswered() {
		long start = System.nanoTime();
		this.cache.remember(CLIENT, LIMITS, Cost.tokens(2), start, DENIED);
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(1), start)).isNull(); // a cheaper request may fit
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(2), start)).isNotNull();
		PlanLimits pro = new PlanLimits("pro", "a", List.of(new LimitDefinition("pro-a", 100, 100, Duration.ofSeconds(1))));
		assertThat(this.cache.lookup(CLIENT, pro, Cost.tokens(2), start)).isNull(); // the client's plan changed
		this.cache.forget(CLIENT, LIMITS);
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(2), start)).isNull();
	}

	@Test
	void allowedAndFallbackDecisionsAreNotRemembered() {
		long start = System.nanoTime();
		this.cache.remember(CLIENT, LIMITS, Cost.tokens(1), start, RateLimitDecision.shared(LIMITS, true,
				List.of(new LimitStatus(LIMIT, true, 1, 0, 60_000))));
		this.cache.remember(CLIENT, LIMITS, Cost.tokens(1), start, new RateLimitDecision(LIMITS, false, DENIED.statuses(),
				RateLimitDecision.Source.LOCAL_FALLBACK));
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(1), start)).isNull();
		assertThat(this.cache.size()).isZero();
	}

	@Test
	void aDenialByAConcurrencyLimitIsNotRemembered() {
		long start = System.nanoTime();
		LimitDefinition slots = LimitDefinition.concurrency("free-a-concurrency", 2, Duration.ofSeconds(30));
		PlanLimits mixed = new PlanLimits("free", "a", List.of(LIMIT, slots));
		// a slot may free with the next response: the estimate of 5 s must not hold the client off
		this.cache.remember(CLIENT, mixed, Cost.tokens(1), start, RateLimitDecision.shared(mixed, false,
				List.of(new LimitStatus(LIMIT, true, 3, 0, 60_000), new LimitStatus(slots, false, 0, 5_000, 30_000))));
		assertThat(this.cache.lookup(CLIENT, mixed, Cost.tokens(1), start)).isNull();
		// denied by the rate limit alone: remembered as always
		this.cache.remember(CLIENT, mixed, Cost.tokens(1), start, RateLimitDecision.shared(mixed, false,
				List.of(new LimitStatus(LIMIT, false, 0, 30_000, 90_000), new LimitStatus(slots, true, 1, 0, 30_000))));
		assertThat(this.cache.lookup(CLIENT, mixed, Cost.tokens(1), start)).isNotNull();
	}

	@Test
	void asALayerAnswersARememberedDenialWithoutAskingTheNextLayer() {
		RateLimitRequest request = new RateLimitRequest(CLIENT, LIMITS, 1, false);
		assertThat(this.cache.check(request).join().source()).isEqualTo(RateLimitDecision.Source.SHARED);
		assertThat(this.checks.get()).isEqualTo(1);
		RateLimitDecision remembered = this.cache.check(request).join();
		assertThat(remembered.source()).isEqualTo(RateLimitDecision.Source.CACHED);
		assertThat(remembered.allowed()).isFalse();
		assertThat(this.checks.get()).isEqualTo(1);
		this.cache.clear();
		assertThat(this.cache.check(request).join().source()).isEqualTo(RateLimitDecision.Source.SHARED);
		assertThat(this.checks.get()).isEqualTo(2);
	}

	@Test
	void boundedInSize() {
		OverLimitCache small = new OverLimitCache((request) -> CompletableFuture.completedFuture(DENIED), 10,
				CheckListener.NONE);
		long start = System.nanoTime();
		for (int i = 0; i < 1_000; i++) {
			small.remember(new ClientKey(ClientKey.Kind.IP, "10.0.0." + i, "anonymous"), LIMITS, Cost.tokens(1), start, DENIED);
		}
		assertThat(small.size()).isLessThanOrEqualTo(10);
	}

	@Test
	void aChangeOfTheClientEndsItsRememberedDenialWhateverItsPlanAndNoOtherClients() {
		long start = System.nanoTime();
		ClientKey other = new ClientKey(ClientKey.Kind.API_KEY, "other", "free");
		this.cache.remember(CLIENT, LIMITS, Cost.tokens(1), start, DENIED);
		this.cache.remember(other, LIMITS, Cost.tokens(1), start, DENIED);
		this.cache.forget(new ClientChange("b", CLIENT.kind(), CLIENT.id())); // another group
		this.cache.forget(new ClientChange("a", ClientKey.Kind.IP, CLIENT.id())); // another kind
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(1), start)).isNotNull();
		this.cache.forget(new ClientChange("a", ClientKey.Kind.API_KEY, "h"));
		assertThat(this.cache.lookup(CLIENT, LIMITS, Cost.tokens(1), start)).isNull();
		assertThat(this.cache.lookup(other, LIMITS, Cost.tokens(1), start)).isNotNull();
	}

	@Test
	void aDenialAnsweredAfterAChangeThatCameWhileItsCheckWasOutIsNotRemembered() {
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		OverLimitCache waiting = new OverLimitCache((request) -> answer, 100, CheckListener.NONE);
		CompletableFuture<RateLimitDecision> decision = waiting.check(new RateLimitRequest(CLIENT, LIMITS, 1, false));
		// the store denied before the reset, the reset's change arrives before the denial does
		waiting.forget(ClientChange.of(CLIENT, "a"));
		answer.complete(DENIED);
		assertThat(decision.join().allowed()).isFalse();
		assertThat(waiting.size()).isZero();
		// a check started after the change remembers its denial
		CompletableFuture<RateLimitDecision> next = waiting.check(new RateLimitRequest(CLIENT, LIMITS, 1, false));
		assertThat(next.join().allowed()).isFalse();
		assertThat(waiting.size()).isOne();
	}

}
