package io.github.ratelimit.test.redis;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SecureRedisServerTest {

    private static SecureRedisServer server;

    @BeforeAll
    static void start() {
        server = SecureRedisServer.builder().user("limited", "secret", "~rl:* resetchannels -@all +get +set").start();
    }

    @AfterAll
    static void close() {
        server.close();
    }

    @Test
    void answersOnlyOverTls() {
        assertThat(server.uri()).isEqualTo("rediss://127.0.0.1:" + server.port());
        assertThat(server.command("PING")).isEqualTo("PONG");
        assertThat(server.command("CONFIG", "GET", "port")).isEqualTo("port\n0");
        assertThat(server.command("CONFIG", "GET", "tls-port")).isEqualTo("tls-port\n" + server.port());
        assertThatThrownBy(() -> server.plainCommand(Duration.ofSeconds(2), "PING"))
            .isInstanceOf(UncheckedIOException.class);
    }

    @Test
    void usersHaveExactlyTheirRules() {
        assertThat(server.commandAs("limited", "secret", "SET", "rl:x", "1")).isEqualTo("OK");
        assertThat(server.commandAs("limited", "secret", "GET", "rl:x")).isEqualTo("1");
        assertThatThrownBy(() -> server.commandAs("limited", "secret", "GET", "other"))
            .hasMessageContaining("NOPERM");
        assertThatThrownBy(() -> server.commandAs("limited", "secret", "DEL", "rl:x"))
            .hasMessageContaining("NOPERM");
        assertThatThrownBy(() -> server.commandAs("limited", "wrong", "PING")).hasMessageContaining("WRONGPASS");
        assertThatThrownBy(() -> server.commandAs("default", "", "PING")).hasMessageContaining("WRONGPASS");
    }

    @Test
    void clientsTrustingAnotherCaRefuseTheServer() throws Exception {
        assertThat(server.certificates().caCertificatePem()).startsWith("-----BEGIN CERTIFICATE-----");
        Path dir = Files.createTempDirectory("other-ca-");
        try {
            TestCertificates other = TestCertificates.create(dir);
            assertThatThrownBy(() -> Resp.command(other.socketFactory(), server.host(), server.port(),
                    Duration.ofSeconds(5), List.of(), "PING"))
                .isInstanceOf(UncheckedIOException.class)
                .hasRootCauseInstanceOf(java.security.cert.CertPathValidatorException.class);
        } finally {
            RedisProcess.deleteDirectory(dir);
        }
    }
}
