package io.github.ratelimit.test.redis;

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisServerTest {

    private RedisServer server;

    @BeforeEach
    void start() {
        server = RedisServer.start();
    }

    @AfterEach
    void close() {
        server.close();
    }

    @Test
    void listensOnLoopback() {
        assertThat(server.host()).isEqualTo("127.0.0.1");
        assertThat(server.port()).isPositive();
        assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
        assertThat(server.command("CONFIG", "GET", "save")).isEqualTo("save\n");
        assertThat(server.command("CONFIG", "GET", "appendonly")).isEqualTo("appendonly\nno");
    }

    @Test
    void setAndGet() {
        assertThat(server.command("SET", "greeting", "héllo\r\nworld")).isEqualTo("OK");
        assertThat(server.command("GET", "greeting")).isEqualTo("héllo\r\nworld");
        assertThat(server.command("GET", "missing")).isNull();
        assertThat(server.command("INCRBY", "counter", "41")).isEqualTo("41");
        assertThat(server.command("SET", "empty", "")).isEqualTo("OK");
        assertThat(server.command("GET", "empty")).isEmpty();
    }

    @Test
    void rendersArrays() {
        server.command("RPUSH", "list", "a", "b", "c");
        assertThat(server.command("LRANGE", "list", "0", "-1")).isEqualTo("a\nb\nc");
        assertThat(server.command("LRANGE", "nothing", "0", "-1")).isEmpty();
        // Nested arrays, an integer and a null element (Lua false) in one reply.
        assertThat(server.command("EVAL", "return {1, {'x', {'y'}}, false, 'z'}", "0"))
                .isEqualTo("1\nx\ny\n(nil)\nz");
        assertThat(server.command("EVAL", "return {1, redis.pcall('INCR', KEYS[1])}", "1", "list"))
                .startsWith("1\n(error) WRONGTYPE");
    }

    @Test
    void errorRepliesAreThrown() {
        assertThatThrownBy(() -> server.command("NOSUCHCOMMAND"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ERR unknown command");
    }

    @Test
    void flushAllDropsKeysAndScripts() {
        server.command("SET", "k", "v");
        String sha = server.command("SCRIPT", "LOAD", "return 1");
        server.flushAll();
        assertThat(server.command("DBSIZE")).isEqualTo("0");
        assertThat(server.command("SCRIPT", "EXISTS", sha)).isEqualTo("0");
    }

    @Test
    void pauseAndResume() {
        server.pause();
        assertThatThrownBy(() -> server.command(Duration.ofMillis(300), "PING"))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("Read timed out");
        server.resume();
        assertThat(server.command(Duration.ofMillis(300), "PING")).isEqualTo("PONG");
    }

    @Test
    void restartKeepsThePortAndEmptiesTheData() {
        int port = server.port();
        server.command("SET", "k", "v");
        String sha = server.command("SCRIPT", "LOAD", "return 1");

        server.restart();

        assertThat(server.port()).isEqualTo(port);
        assertThat(server.command("GET", "k")).isNull();
        assertThat(server.command("SCRIPT", "EXISTS", sha)).isEqualTo("0");
    }

    @Test
    void restartWorksWhilePaused() {
        server.pause();
        server.restart();
        assertThat(server.command("PING")).isEqualTo("PONG");
    }

    @Test
    void killClosesThePort() {
        server.kill();
        assertPortClosed(server.port());
        assertThatThrownBy(() -> server.command("PING")).isInstanceOf(UncheckedIOException.class);
        assertThatThrownBy(server::pause).isInstanceOf(IllegalStateException.class);
        server.kill(); // idempotent
    }

    @Test
    void stopClosesThePortAndCloseDeletesTheDirectory() {
        Path dir = server.directory();
        assertThat(dir.resolve("redis.pid")).exists();
        server.stop();
        assertPortClosed(server.port());
        server.close();
        assertThat(Files.exists(dir)).isFalse();
    }

    @Test
    void serversAreIndependent() {
        try (RedisServer other = RedisServer.start()) {
            assertThat(other.port()).isNotEqualTo(server.port());
            other.command("SET", "k", "other");
            assertThat(server.command("GET", "k")).isNull();
        }
    }

    private static void assertPortClosed(int port) {
        assertThatThrownBy(() -> {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            }
        }).isInstanceOf(ConnectException.class);
    }
}
