package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Key names and the key a client's shard is looked up by (pure logic). */
class BucketKeysTest {

	private static final BucketKeys KEYS = new BucketKeys("rl");

	@Test
	void theSlotKeyHashesToTheSlotOfEveryKeyEvenWithBracesInTheId() {
		PlanLimits limits = new PlanLimits("free", "se{ar}ch", List.of(new LimitDefinition("a", 2, 1,
				Duration.ofSeconds(1)), new LimitDefinition("b", 20, 1, Duration.ofMinutes(1))));
		for (String id : List.of("abc", "198.51.100.7", "u{x}y", "user}x", "{", "}")) {
			ClientKey client = new ClientKey(ClientKey.Kind.API_KEY, id, "free");
			int slot = SlotHash.getSlot(KEYS.slotKey(client, limits));
			for (String key : KEYS.keysFor(client, limits)) {
				assertThat(SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8))).as("%s, id %s", key, id)
					.isEqualTo(slot);
			}
		}
	}

}
