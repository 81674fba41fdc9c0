package io.github.ratelimit.test.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(RedisExtension.class)
class TestRedisTest {

    @Test
    void extensionResolvesTheSharedInstanceAndFlushedIt(TestRedis redis) {
        assertThat(redis).isSameAs(TestRedis.shared());
        assertThat(redis.uri()).isEqualTo("redis://" + redis.host() + ":" + redis.port());
        assertThat(redis.command("DBSIZE")).isEqualTo("0");
        assertThat(redis.command("SET", "k", "v")).isEqualTo("OK");
        assertThat(redis.command("GET", "k")).isEqualTo("v");
        redis.flushAll();
        assertThat(redis.command("GET", "k")).isNull();
    }

    @Test
    void usesAnExplicitUrlAsIs() {
        try (RedisServer server = RedisServer.start()) {
            TestRedis redis = TestRedis.fromUrl(server.uri(), "test");
            assertThat(redis.host()).isEqualTo("127.0.0.1");
            assertThat(redis.port()).isEqualTo(server.port());
            assertThat(redis.uri()).isEqualTo(server.uri());
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void rejectsBadUrls() {
        assertThatThrownBy(() -> TestRedis.fromUrl("http://localhost:6379", "test"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("redis://host:port");
        assertThatThrownBy(() -> TestRedis.fromUrl("redis://127.0.0.1:1", "test"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("does not answer PING");
    }
}
