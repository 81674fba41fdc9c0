package io.github.ratelimit.gateway.chain;

import java.time.Duration;

import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LimitStatusTest {

	@Test
	void aRefundedTokenBucketHoldsTheCostAgainAndIsFullSooner() {
		// 10 tokens, 1 per 100 ms: 4 left, full in 600 ms; giving back 2 leaves 6, full in 400 ms
		LimitDefinition bucket = new LimitDefinition("b", 10, 1, Duration.ofMillis(100));
		LimitStatus refunded = new LimitStatus(bucket, true, 4, 0, 600).afterGiveBack(2);
		assertThat(refunded.remaining()).isEqualTo(6);
		assertThat(refunded.resetMillis()).isEqualTo(400);
		assertThat(refunded.satisfied()).isTrue();
	}

	@Test
	void aRefundNeverFillsPastCapacity() {
		LimitDefinition bucket = new LimitDefinition("b", 10, 1, Duration.ofMillis(100));
		LimitStatus refunded = new LimitStatus(bucket, true, 9, 0, 100).afterGiveBack(5);
		assertThat(refunded.remaining()).isEqualTo(10);
		assertThat(refunded.resetMillis()).isZero();
	}

	@Test
	void aRefundedWindowKeepsItsReset() {
		LimitDefinition window = LimitDefinition.window("w", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		LimitStatus refunded = new LimitStatus(window, false, 0, 30_000, 30_000).afterGiveBack(1);
		assertThat(refunded.remaining()).isEqualTo(1);
		assertThat(refunded.resetMillis()).isEqualTo(30_000);
		assertThat(refunded.retryAfterMillis()).isEqualTo(30_000);
	}

}
