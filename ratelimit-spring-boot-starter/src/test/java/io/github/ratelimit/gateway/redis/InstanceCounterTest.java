package io.github.ratelimit.gateway.redis;

import java.time.Duration;

import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** Instances learn how many of them share the limits, from heartbeats in a real Redis. */
@ExtendWith(RedisExtension.class)
class InstanceCounterTest {

	@Test
	void instancesCountEachOtherAndKeepTheLastCount(TestRedis redis) {
		LettuceConnectionFactory factory = StartedConnectionFactory.to(redis.host(), redis.port());
		try {
			ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(factory);
			InstanceCounter a = new InstanceCounter(template, "ic", 7, true, Duration.ofSeconds(5));
			InstanceCounter b = new InstanceCounter(template, "ic", 7, true, Duration.ofSeconds(5));
			assertThat(a.instances()).isEqualTo(7); // configured, nothing learned yet
			assertThat(a.isLearned()).isFalse();
			assertThat(a.beat().join()).isEqualTo(1);
			assertThat(b.beat().join()).isEqualTo(2);
			assertThat(a.beat().join()).isEqualTo(2);
			assertThat(a.instances()).isEqualTo(2);
			assertThat(a.isLearned()).isTrue();
			long ttl = Long.parseLong(redis.command("PTTL", "ic:instances"));
			assertThat(ttl).isPositive().isLessThanOrEqualTo(15_000);
		}
		finally {
			factory.destroy();
		}
	}

}
