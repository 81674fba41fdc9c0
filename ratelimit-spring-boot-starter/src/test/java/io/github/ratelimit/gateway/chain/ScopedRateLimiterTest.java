package io.github.ratelimit.gateway.chain;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Cost;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Limits with {@code scope: global} against a real Redis, through {@link ScopedRateLimiter} around the Redis store:
 * one group-wide bucket shared by every client, all-or-nothing across the two scopes (a client denied by its own
 * limit takes nothing from the group's; a global denial gives the client's tokens back), every limit reported in
 * configuration order.
 */
class ScopedRateLimiterTest {

	private static final TestRedis testRedis = TestRedis.shared();

	@RegisterExtension
	static final RedisStoreOnTestRedis redis = new RedisStoreOnTestRedis();

	private static ScopedRateLimiter limiter;

	private static final String GLOBAL_KEY = "rl:{search|g:all}:0";

	private static final long HOUR_MICROS = 3_600_000_000L;

	private final ClientKey alice = new ClientKey(ClientKey.Kind.API_KEY, "alice", "free");

	private final ClientKey bob = new ClientKey(ClientKey.Kind.API_KEY, "bob", "free");

	/** The global limit first in the list, so putting states back in order is tested too. */
	private final PlanLimits limits = new PlanLimits("free", "search",
			List.of(new LimitDefinition("search-global", 3, 1, Duration.ofHours(1), Algorithm.TOKEN_BUCKET,
					LimitScope.GLOBAL), new LimitDefinition("free-search", 2, 1, Duration.ofHours(1))));

	@BeforeAll
	static void layer() {
		limiter = new ScopedRateLimiter(redis.store());
	}

	@Test
	void theGlobalLimitIsSharedAcrossClients() {
		assertThat(consume(this.alice, this.limits, 1).allowed()).isTrue();
		assertThat(consume(this.alice, this.limits, 1).allowed()).isTrue();
		RateLimitDecision bobFirst = consume(this.bob, this.limits, 1);
		assertThat(bobFirst.allowed()).isTrue();
		// every limit, in configuration order: the group's bucket (3 - 3 = 0 left), then bob's own (2 - 1)
		assertThat(bobFirst.statuses()).extracting((s) -> s.limit().policyName(), LimitStatus::remaining)
			.containsExactly(tuple("search-global", 0L),
					tuple("free-search", 1L));
		RateLimitDecision bobSecond = consume(this.bob, this.limits, 1);
		assertThat(bobSecond.allowed()).isFalse();
		assertThat(bobSecond.violated()).extracting((s) -> s.limit().policyName()).containsExactly("search-global");
		// Retry-After of the group's bucket: 1 token per hour
		assertThat(bobSecond.retryAfterMillis()).isBetween(3_590_000L, 3_600_000L);
		assertThat(testRedis.command("EXISTS", GLOBAL_KEY)).isEqualTo("1");
	}

	@Test
	void aClientDeniedByItsOwnLimitTakesNothingFromTheGroup() {
		assertThat(consume(this.alice, this.limits, 1).allowed()).isTrue();
		assertThat(consume(this.alice, this.limits, 1).allowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			RateLimitDecision denied = consume(this.alice, this.limits, 1);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-search");
			// the group's bucket is reported (read without consuming): 3 - 2 = 1 token left
			assertThat(denied.statuses()).hasSize(2);
			assertThat(denied.statuses().get(0).remaining()).isEqualTo(1);
		}
		assertThat(StoredTokens.of(testRedis::command, GLOBAL_KEY, 3, 1, HOUR_MICROS)).isBetween(1.0, 1.01);
		// the group's last token is still there for another client
		assertThat(consume(this.bob, this.limits, 1).allowed()).isTrue();
	}

	@Test
	void aGlobalDenialGivesTheClientsTokensBack() {
		PlanLimits mixed = new PlanLimits("free", "search",
				List.of(new LimitDefinition("free-search-1h", 5, 1, Duration.ofHours(1)),
						LimitDefinition.window("free-search-1d", Algorithm.SLIDING_WINDOW_LOG, 5, Duration.ofDays(1)),
						new LimitDefinition("search-global", 1, 1, Duration.ofHours(1), Algorithm.TOKEN_BUCKET,
								LimitScope.GLOBAL)));
		assertThat(consume(this.bob, mixed, 1).allowed()).isTrue(); // bob takes the group's only token
		RateLimitDecision denied = consume(this.alice, mixed, 1);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("search-global");
		// alice's own limits are reported as after the refund, and really hold all their tokens again
		assertThat(denied.statuses()).extracting(LimitStatus::remaining).containsExactly(5L, 5L, 0L);
		String bucket = "rl:{search|k:alice}:0";
		String log = "rl:{search|k:alice}:1:swl";
		assertThat(StoredTokens.of(testRedis::command, bucket, 5, 1, HOUR_MICROS)).isGreaterThanOrEqualTo(5.0 - 1e-9);
		assertThat(testRedis.command("ZCARD", log)).isEqualTo("0");
		RateLimitDecision read = limiter.tryConsume(this.alice, mixed, 0).orTimeout(30, TimeUnit.SECONDS).join();
		assertThat(read.statuses()).extracting(LimitStatus::remaining).containsExactly(5L, 5L, 0L);
	}

	@Test
	void onlyGlobalLimitsUseOnlyTheGroupsBucket() {
		PlanLimits global = new PlanLimits("free", "search", List.of(new LimitDefinition("search-global", 2, 1,
				Duration.ofHours(1), Algorithm.TOKEN_BUCKET, LimitScope.GLOBAL)));
		assertThat(consume(this.alice, global, 1).allowed()).isTrue();
		assertThat(consume(this.bob, global, 1).allowed()).isTrue();
		assertThat(consume(this.alice, global, 1).allowed()).isFalse();
		assertThat(testRedis.command("EXISTS", "rl:{search|k:alice}:0")).isEqualTo("0");
		// a reset of one client leaves the shared bucket alone
		assertThat(limiter.reset(this.alice, global).orTimeout(30, TimeUnit.SECONDS).join()).isZero();
		assertThat(consume(this.bob, global, 1).allowed()).isFalse();
	}

	@Test
	void resetTouchesOnlyTheClientsOwnBuckets() {
		consume(this.alice, this.limits, 1);
		consume(this.alice, this.limits, 1);
		assertThat(limiter.reset(this.alice, this.limits).orTimeout(30, TimeUnit.SECONDS).join()).isEqualTo(1);
		assertThat(testRedis.command("EXISTS", GLOBAL_KEY)).isEqualTo("1");
		RateLimitDecision after = consume(this.alice, this.limits, 1);
		assertThat(after.allowed()).isTrue();
		assertThat(after.statuses()).extracting(LimitStatus::remaining).containsExactly(0L, 1L);
	}

	@Test
	void refundOfAnAbandonedCheckGivesBackBothScopes() {
		consume(this.alice, this.limits, 1);
		limiter.refund(this.alice, this.limits, Cost.tokens(1)).orTimeout(30, TimeUnit.SECONDS).join();
		assertThat(StoredTokens.of(testRedis::command, GLOBAL_KEY, 3, 1, HOUR_MICROS)).isGreaterThanOrEqualTo(3.0 - 1e-9);
		assertThat(StoredTokens.of(testRedis::command, "rl:{search|k:alice}:0", 2, 1, HOUR_MICROS))
			.isGreaterThanOrEqualTo(2.0 - 1e-9);
	}

	@Test
	void limitsWithoutGlobalOnesGoStraightToTheStore() {
		PlanLimits own = new PlanLimits("free", "search", List.of(new LimitDefinition("free-search", 1, 1,
				Duration.ofHours(1))));
		assertThat(consume(this.alice, own, 1).allowed()).isTrue();
		assertThat(consume(this.alice, own, 1).allowed()).isFalse();
		assertThat(testRedis.command("EXISTS", "rl:{search|k:alice}:0")).isEqualTo("1");
		// no group-wide key: only the client's (other tests' gateways may keep their heartbeat keys in this Redis)
		assertThat(testRedis.command("KEYS", "rl:{search|*")).isEqualTo("rl:{search|k:alice}:0");
	}

	private static RateLimitDecision consume(ClientKey client, PlanLimits limits, long cost) {
		return limiter.tryConsume(client, limits, cost).orTimeout(30, TimeUnit.SECONDS).join();
	}

}
