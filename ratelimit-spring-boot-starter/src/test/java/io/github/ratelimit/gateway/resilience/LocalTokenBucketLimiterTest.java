package io.github.ratelimit.gateway.resilience;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.key.ClientKey;
import io.github.ratelimit.gateway.limit.BucketLimit;
import io.github.ratelimit.gateway.limit.PlanLimits;
import io.github.ratelimit.gateway.limiter.RateLimitDecision;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LocalTokenBucketLimiterTest {

	private static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.API_KEY, "hash", "free");

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	private final AtomicInteger instances = new AtomicInteger(2);

	private final LocalTokenBucketLimiter limiter = new LocalTokenBucketLimiter(1_000, this.instances::get,
			this.nanos::get);

	@Test
	void holdsThisInstancesShareOfEachLimit() {
		PlanLimits limits = limits(new BucketLimit("free-api", 4, 4, Duration.ofSeconds(1)));
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isTrue();
		RateLimitDecision third = consume(limits);
		assertThat(third.allowed()).isFalse();
		assertThat(third.source()).isEqualTo(RateLimitDecision.Source.LOCAL_FALLBACK);
		// share of the refill: 2 tokens/s, so one token after 500 ms
		assertThat(third.retryAfterMillis()).isEqualTo(500);
		this.nanos.addAndGet(Duration.ofMillis(500).toNanos());
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isFalse();
	}

	@Test
	void deniedRequestConsumesFromNoLimit() {
		PlanLimits limits = limits(new BucketLimit("free-api-1s", 20, 20, Duration.ofSeconds(1)),
				new BucketLimit("free-api-1h", 2, 2, Duration.ofHours(1)));
		this.instances.set(1);
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isTrue();
		RateLimitDecision denied = consume(limits);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.statuses().get(0).remaining()).isEqualTo(18);
		assertThat(denied.violated()).extracting((s) -> s.limit().policyName()).containsExactly("free-api-1h");
	}

	@Test
	void shareNeverFallsBelowTheCost() {
		// capacity 3 over 4 instances is 0.75 tokens: the share is raised to 1 so the request can pass at all
		this.instances.set(4);
		PlanLimits limits = limits(new BucketLimit("anonymous-login", 3, 3, Duration.ofMinutes(15)));
		assertThat(consume(limits).allowed()).isTrue();
		assertThat(consume(limits).allowed()).isFalse();
	}

	@Test
	void newInstanceCountTakesEffect() {
		PlanLimits limits = limits(new BucketLimit("free-api", 10, 10, Duration.ofMinutes(1)));
		this.instances.set(5);
		assertThat(consume(limits).statuses().get(0).remaining()).isEqualTo(1);
		this.instances.set(1);
		assertThat(consume(limits).statuses().get(0).remaining()).isEqualTo(9);
	}

	@Test
	void memoryIsBoundedWithManyClients() {
		LocalTokenBucketLimiter small = new LocalTokenBucketLimiter(100, () -> 1, this.nanos::get);
		PlanLimits limits = limits(new BucketLimit("free-api", 10, 10, Duration.ofMinutes(1)));
		for (int i = 0; i < 10_000; i++) {
			small.consume(new ClientKey(ClientKey.Kind.IP, "10.0." + (i / 256) + "." + (i % 256), "anonymous"), limits, 1);
		}
		assertThat(small.size()).isLessThanOrEqualTo(100);
	}

	private RateLimitDecision consume(PlanLimits limits) {
		return this.limiter.consume(CLIENT, limits, 1);
	}

	private static PlanLimits limits(BucketLimit... limits) {
		return new PlanLimits("free", "api", List.of(limits));
	}

}
