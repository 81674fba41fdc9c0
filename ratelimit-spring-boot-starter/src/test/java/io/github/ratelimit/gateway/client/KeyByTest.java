package io.github.ratelimit.gateway.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KeyByTest {

	@Test
	void parsesConfiguredSpellingsLeniently() {
		for (String apiKey : new String[] { "api-key", "api_key", "API_KEY", "apiKey", " api-key " }) {
			assertThat(KeyBy.parse(apiKey)).as(apiKey).isEqualTo(KeyBy.API_KEY);
		}
		assertThat(KeyBy.parse("ip")).isEqualTo(KeyBy.IP);
		assertThat(KeyBy.parse("IP")).isEqualTo(KeyBy.IP);
		assertThat(KeyBy.parse("principal")).isEqualTo(KeyBy.PRINCIPAL);
		assertThat(KeyBy.parse(" Principal ")).isEqualTo(KeyBy.PRINCIPAL);
		assertThat(KeyBy.parse("header")).isEqualTo(KeyBy.HEADER);
		assertThat(KeyBy.parse("cookie")).isNull();
		assertThat(KeyBy.parse("")).isNull();
	}

}
