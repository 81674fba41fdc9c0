package io.github.ratelimit.gateway.limits;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link LeaseBudget}: the text forms of a limit's {@code lease} property, its canonical form, and the rules a
 * {@link LimitDefinition} adds.
 */
class LeaseBudgetTest {

	@Test
	void offOrBlankIsNoLeases() {
		assertThat(LeaseBudget.of("off")).isSameAs(LeaseBudget.OFF);
		assertThat(LeaseBudget.of(" OFF ")).isEqualTo(LeaseBudget.OFF);
		assertThat(LeaseBudget.of("Off")).isEqualTo(LeaseBudget.OFF);
		assertThat(LeaseBudget.of("")).isEqualTo(LeaseBudget.OFF);
		assertThat(LeaseBudget.of("  ")).isEqualTo(LeaseBudget.OFF);
		assertThat(LeaseBudget.OFF.isOff()).isTrue();
		assertThat(LeaseBudget.OFF.percent()).isZero();
	}

	@Test
	void aPercentageAboveZeroIsABudget() {
		assertThat(LeaseBudget.of("2%").percent()).isEqualTo(2.0);
		assertThat(LeaseBudget.of("2.5%").percent()).isEqualTo(2.5);
		assertThat(LeaseBudget.of("0.5 %").percent()).isEqualTo(0.5);
		assertThat(LeaseBudget.of(" 20% ").percent()).isEqualTo(20.0);
		assertThat(LeaseBudget.of("2.0%")).isEqualTo(new LeaseBudget(2)).isEqualTo(LeaseBudget.of("2%"));
		assertThat(LeaseBudget.of("2%").isOff()).isFalse();
		// the limit's ceiling (50%) is a rule of the limit, reported by the validator with the property's name
		assertThat(LeaseBudget.of("60%").percent()).isEqualTo(60.0);
	}

	@ParameterizedTest
	@ValueSource(strings = { "2", "0", "x%", "%", "0%", "0.0%", "-1%", "NaN%", "Infinity%", "2%%", "two percent" })
	void anyOtherTextIsRefusedSayingWhatToWrite(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> LeaseBudget.of(text))
			.withMessage("must be off or a percentage above 0% and at most 50% of the capacity, was '" + text
					+ "'. Fix: set e.g. lease: 2% (a lease holds at most 2% of the capacity), or leave it out.");
	}

	@Test
	void aNegativeOrNonFinitePercentageIsNoBudget() {
		assertThatIllegalArgumentException().isThrownBy(() -> new LeaseBudget(-1));
		assertThatIllegalArgumentException().isThrownBy(() -> new LeaseBudget(Double.NaN));
		assertThatIllegalArgumentException().isThrownBy(() -> new LeaseBudget(Double.POSITIVE_INFINITY));
	}

	@Test
	void theCanonicalFormIsWhatTheLeasePropertyTakes() {
		assertThat(LeaseBudget.OFF).hasToString("off");
		assertThat(LeaseBudget.of(" OFF ")).hasToString("off");
		assertThat(LeaseBudget.of("2%")).hasToString("2%");
		assertThat(LeaseBudget.of("2.0%")).hasToString("2%");
		assertThat(LeaseBudget.of("2.50 %")).hasToString("2.5%");
		assertThat(LeaseBudget.of("0.5%")).hasToString("0.5%");
		assertThat(new LeaseBudget(20)).hasToString("20%");
		assertThat(new LeaseBudget(50)).hasToString("50%");
		for (String text : new String[] { "off", "2%", "2.5%", "0.125%", "33.3%", "50%" }) {
			assertThat(LeaseBudget.of(LeaseBudget.of(text).toString())).isEqualTo(LeaseBudget.of(text));
		}
	}

	@Test
	void aLimitTakesABudgetOfAtMostHalfItsCapacityOnATokenBucketOnly() {
		LimitDefinition bucket = new LimitDefinition("pro", 2_000, 1_000, Duration.ofSeconds(1));
		assertThat(bucket.leaseBudget()).isEqualTo(LeaseBudget.OFF);
		assertThat(bucket.leaseTokens()).isZero();
		assertThat(bucket.withLeaseBudget(LeaseBudget.of("2%")).leaseTokens()).isEqualTo(40);
		assertThat(bucket.withLeaseBudget(LeaseBudget.of("0.01%")).leaseTokens()).isZero(); // floor(0.2)
		assertThat(bucket.withLeaseBudget(LeaseBudget.of("50%")).leaseTokens()).isEqualTo(1_000);
		assertThatIllegalArgumentException().isThrownBy(() -> bucket.withLeaseBudget(LeaseBudget.of("50.5%")));
		LimitDefinition window = LimitDefinition.window("pro", Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
		assertThat(window.withLeaseBudget(LeaseBudget.OFF).leaseBudget()).isEqualTo(LeaseBudget.OFF);
		assertThatIllegalArgumentException().isThrownBy(() -> window.withLeaseBudget(LeaseBudget.of("2%")));
	}

}
