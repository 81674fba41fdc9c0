package io.github.ratelimit.gateway.redis;

import io.github.ratelimit.gateway.chain.ClientChange;
import io.github.ratelimit.gateway.client.ClientKey;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The messages of {@link RedisClientChanges}: a change and back, and what is no change. */
class RedisClientChangesTest {

	@Test
	void aChangeIsOneLineWithTheHashedClientAndTheGroupLast() {
		ClientChange change = new ClientChange("login v2", ClientKey.Kind.API_KEY, "abc123");
		assertThat(RedisClientChanges.encode(change)).isEqualTo("client k:abc123 login v2");
		assertThat(RedisClientChanges.decode("client k:abc123 login v2")).isEqualTo(change);
		// an IPv6 address holds colons; the kind's tag ends at the first
		ClientChange ipv6 = new ClientChange("a", ClientKey.Kind.IP, "2001:db8::1");
		assertThat(RedisClientChanges.decode(RedisClientChanges.encode(ipv6))).isEqualTo(ipv6);
		for (ClientKey.Kind kind : new ClientKey.Kind[] { ClientKey.Kind.PRINCIPAL, ClientKey.Kind.HEADER }) {
			ClientChange hashed = new ClientChange("g", kind, "f00d");
			assertThat(RedisClientChanges.decode(RedisClientChanges.encode(hashed))).isEqualTo(hashed);
		}
	}

	@Test
	void otherMessagesAreNoChange() {
		assertThat(RedisClientChanges.decode("")).isNull();
		assertThat(RedisClientChanges.decode("plan k:abc a")).isNull();
		assertThat(RedisClientChanges.decode("client k:abc")).isNull(); // no group
		assertThat(RedisClientChanges.decode("client k:abc ")).isNull();
		assertThat(RedisClientChanges.decode("client x:abc a")).isNull(); // no such kind
		assertThat(RedisClientChanges.decode("client g:all a")).isNull(); // never the group-wide client
		assertThat(RedisClientChanges.decode("client k: a")).isNull();
		assertThat(RedisClientChanges.decode("client abc a")).isNull();
	}

}
