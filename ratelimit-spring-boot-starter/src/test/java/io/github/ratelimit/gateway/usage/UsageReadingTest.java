package io.github.ratelimit.gateway.usage;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class UsageReadingTest {

	@Test
	void onlyAUsageFoundHasAValueFromZeroToTwoToThe53rd() {
		assertThat(UsageReading.found(0).value()).isZero();
		assertThat(UsageReading.found(UsageReading.MAX_VALUE).value()).isEqualTo(9007199254740992L);
		assertThatIllegalArgumentException().isThrownBy(() -> UsageReading.found(-1));
		assertThatIllegalArgumentException().isThrownBy(() -> UsageReading.found(UsageReading.MAX_VALUE + 1));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new UsageReading(UsageReading.Kind.MISSING, 1))
			.withMessage("Only a usage found has a value, MISSING had 1");
	}

	@Test
	void eachFactoryGivesItsKindWithNoValue() {
		assertThat(UsageReading.found(3)).isEqualTo(new UsageReading(UsageReading.Kind.FOUND, 3));
		assertThat(UsageReading.missing()).isEqualTo(new UsageReading(UsageReading.Kind.MISSING, 0));
		assertThat(UsageReading.notJson()).isEqualTo(new UsageReading(UsageReading.Kind.NOT_JSON, 0));
		assertThat(UsageReading.notANumber()).isEqualTo(new UsageReading(UsageReading.Kind.NOT_A_NUMBER, 0));
		assertThat(UsageReading.negative()).isEqualTo(new UsageReading(UsageReading.Kind.NEGATIVE, 0));
		assertThat(UsageReading.tooLarge()).isEqualTo(new UsageReading(UsageReading.Kind.TOO_LARGE, 0));
		assertThat(UsageReading.pending()).isEqualTo(new UsageReading(UsageReading.Kind.PENDING, 0));
	}

}
