package io.github.ratelimit.accuracy;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The strict upper bound check of token-bucket runs, on made-up admission times. */
class UpperBoundTest {

	/** 50 per 100 ms: one token per 2,000 µs. */
	private static final double RATE = 50 / 100_000.0;

	@Test
	void aFullBucketThenTheRefillRateIsExactlyAtTheBound() {
		long[] times = new long[50 + 100];
		for (int i = 50; i < times.length; i++) {
			times[i] = (i - 49) * 2_000L; // one token as each refills
		}
		UpperBound bound = UpperBound.of(50, RATE, times, 200_000);
		assertThat(bound.holds()).isTrue();
		assertThat(bound.maxExcess()).isCloseTo(50, org.assertj.core.data.Offset.offset(1e-9));
		assertThat(bound.violation()).isNull();
	}

	@Test
	void oneAdmissionTooEarlyAnywhereExceedsIt() {
		long[] times = new long[50 + 100];
		for (int i = 50; i < times.length; i++) {
			times[i] = (i - 49) * 2_000L;
		}
		times[120] -= 1; // 1 µs before its token refilled
		UpperBound bound = UpperBound.of(50, RATE, times, 200_000);
		assertThat(bound.holds()).isFalse();
		assertThat(bound.excessFromMicros()).isZero();
		assertThat(bound.excessToMicros()).isEqualTo(times[120]);
		assertThat(bound.excessCount()).isEqualTo(121);
		assertThat(bound.violation()).contains("121 admitted").contains("above the capacity 50");
	}

	@Test
	void aBurstLaterInTheRunCountsOverItsOwnWindow() {
		// steady at the rate for 1 s, then a quiet 100 ms refills the bucket: a burst of 50 is within the bound,
		// 51 is not (the window from the burst's first admission holds capacity + 1)
		long[] steady = new long[500 + 51];
		for (int i = 0; i < 500; i++) {
			steady[i] = i * 2_000L;
		}
		for (int i = 500; i < steady.length; i++) {
			steady[i] = 1_100_000L + (i - 500);
		}
		assertThat(UpperBound.of(50, RATE, java.util.Arrays.copyOf(steady, 550), 1_200_000).holds()).isTrue();
		UpperBound over = UpperBound.of(50, RATE, steady, 1_200_000);
		assertThat(over.holds()).isFalse();
		assertThat(over.excessFromMicros()).isGreaterThanOrEqualTo(998_000L);
	}

	@Test
	void countsPerSecond() {
		long[] times = { 0, 10, 999_999, 1_000_000, 1_500_000, 2_000_001, 2_500_000 };
		UpperBound bound = UpperBound.of(50, RATE, times, 2_600_000);
		assertThat(bound.wholeSeconds()).isEqualTo(2);
		assertThat(bound.minPerSecond()).isEqualTo(2); // [1 s, 2 s): 1,000,000 and 1,500,000
		assertThat(bound.maxPerSecond()).isEqualTo(3);
		assertThat(bound.maxInSecond()).isEqualTo(3);
		assertThat(bound.secondLimit()).isEqualTo(550.0);
		assertThat(UpperBound.of(50, RATE, new long[0], 0).holds()).isTrue();
	}

}
