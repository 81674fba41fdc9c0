package io.github.ratelimit.gateway.usage;

import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class UsageFieldTest {

	@Test
	void parsesDotSeparatedKeys() {
		UsageField field = UsageField.parse("usage.total_tokens");
		assertThat(field.keys()).containsExactly("usage", "total_tokens");
		assertThat(field).hasToString("usage.total_tokens");
		assertThat(UsageField.parse("n").keys()).containsExactly("n");
		assertThat(UsageField.parse(" a b .\u00e4\"").keys()).containsExactly(" a b ", "\u00e4\"");
	}

	@Test
	void takesUpTo16KeysOfUpTo128Characters() {
		String longest = "k".repeat(128);
		assertThat(UsageField.parse(longest).keys()).containsExactly(longest);
		String sixteen = String.join(".", Collections.nCopies(16, "k"));
		assertThat(UsageField.parse(sixteen)).hasToString(sixteen);
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse("k".repeat(129)))
			.withMessageContaining("Key 1 ")
			.withMessageContaining("longer than 128 characters (129)");
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse(sixteen + ".k"))
			.withMessageContaining("at most 16 keys")
			.withMessageContaining("has 17");
	}

	@Test
	void rejectsAnEmptyKey() {
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse(""))
			.withMessage("A usage field must not be empty");
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse("usage..total_tokens"))
			.withMessage("Key 2 of the usage field 'usage..total_tokens' is empty");
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse(".usage"))
			.withMessage("Key 1 of the usage field '.usage' is empty");
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse("usage."))
			.withMessage("Key 2 of the usage field 'usage.' is empty");
		assertThatIllegalArgumentException().isThrownBy(() -> UsageField.parse("."))
			.withMessageContaining("is empty");
	}

	@Test
	void keysGivenAsAListHaveTheSameRules() {
		assertThat(new UsageField(List.of("usage", "total_tokens"))).isEqualTo(UsageField.parse("usage.total_tokens"));
		assertThatIllegalArgumentException().isThrownBy(() -> new UsageField(List.of()))
			.withMessage("A usage field needs at least one key");
		assertThatIllegalArgumentException().isThrownBy(() -> new UsageField(List.of("usage.total_tokens")))
			.withMessage("Key 1 of the usage field 'usage.total_tokens' contains a '.'");
	}

}
