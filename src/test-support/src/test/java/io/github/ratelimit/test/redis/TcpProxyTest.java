package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

class TcpProxyTest {

    private static final byte[] PING = "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);
    /** Read timeout proving that nothing is answered. */
    private static final int SILENCE_MILLIS = 300;
    /** Generous bound for anything that is expected to happen. */
    private static final int EXPECTED_MILLIS = 5_000;
    private static final Duration WAIT = Duration.ofMillis(EXPECTED_MILLIS);

    private static RedisServer redis;
    private TcpProxy proxy;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @BeforeEach
    void startProxy() {
        redis.flushAll();
        proxy = TcpProxy.start(redis.host(), redis.port());
    }

    @AfterEach
    void closeProxy() {
        proxy.close();
    }

    @Test
    void forwardsCommands() throws IOException {
        assertThat(proxy.host()).isEqualTo("127.0.0.1");
        assertThat(proxy.port()).isPositive().isNotEqualTo(redis.port());
        assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port());
        assertThat(proxy.isBlackholed()).isFalse();

        assertThat(Resp.command(proxy.host(), proxy.port(), WAIT, "SET", "k", "v")).isEqualTo("OK");
        assertThat(redis.command("GET", "k")).isEqualTo("v");
        String big = "x".repeat(100_000); // several buffers each way
        assertThat(Resp.command(proxy.host(), proxy.port(), WAIT, "SET", "big", big)).isEqualTo("OK");
        assertThat(Resp.command(proxy.host(), proxy.port(), WAIT, "GET", "big")).isEqualTo(big);

        try (Socket socket = connect()) {
            assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
            // Resp.command's connections are closed by the client; the proxy notices asynchronously.
            assertThat(proxy.awaitOpenConnections(1, WAIT)).isTrue();
            String prefix = "tcp-proxy-" + proxy.port() + "-";
            // Connections 1 to 3 were Resp.command's; their threads may still be ending.
            assertThat(threads(proxy)).extracting(Thread::getName).contains(
                    prefix + "accept", prefix + "conn4-up", prefix + "conn4-down");
            assertThat(threads(proxy)).allMatch(Thread::isDaemon);
        }
        assertThat(proxy.awaitOpenConnections(0, WAIT)).isTrue();
    }

    @Test
    void blackholeSilencesExistingAndNewConnectionsUntilRestored() throws IOException {
        try (Socket existing = connect()) {
            assertThat(ping(existing, EXPECTED_MILLIS)).isEqualTo("+PONG");

            proxy.blackhole();
            assertThat(proxy.isBlackholed()).isTrue();

            // An existing connection stays open but gets no reply; its command never reaches Redis.
            send(existing, "*3\r\n$3\r\nSET\r\n$9\r\nblackhole\r\n$1\r\nv\r\n");
            assertNoReply(existing);
            assertThat(ping(existing, SILENCE_MILLIS, true)).isNull();

            // A new connection is accepted but gets no reply either.
            try (Socket fresh = connect()) {
                assertThat(proxy.awaitOpenConnections(2, WAIT)).isTrue();
                assertThat(ping(fresh, SILENCE_MILLIS, true)).isNull();
                assertThat(proxy.openConnections()).isEqualTo(2);
                assertThat(redis.command("EXISTS", "blackhole")).isEqualTo("0");

                proxy.restore();
                assertThat(proxy.isBlackholed()).isFalse();

                // Connections that lived through the blackhole are reset; new ones work again.
                assertClosedByProxy(existing);
                assertClosedByProxy(fresh);
                assertThat(proxy.openConnections()).isZero();
                try (Socket restored = connect()) {
                    assertThat(ping(restored, EXPECTED_MILLIS)).isEqualTo("+PONG");
                    assertThat(proxy.openConnections()).isEqualTo(1);
                }
            }
        }
        assertThat(redis.command("EXISTS", "blackhole")).isEqualTo("0");
    }

    @Test
    void blackholeHidesTheTargetClosingAConnection() throws IOException {
        try (Socket socket = connect()) {
            assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
            proxy.blackhole();
            // Redis closes the connection (QUIT is dropped, so kill it from another client); the client sees nothing.
            redis.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
            assertNoReply(socket);
            assertThat(proxy.openConnections()).isEqualTo(1);
        }
    }

    @Test
    void cutConnectionsResetsClientsAndKeepsListening() throws IOException {
        try (Socket first = connect(); Socket second = connect()) {
            assertThat(ping(first, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(ping(second, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(proxy.openConnections()).isEqualTo(2);

            proxy.cutConnections();

            assertThat(proxy.openConnections()).isZero();
            assertClosedByProxy(first);
            assertClosedByProxy(second);
        }
        try (Socket again = connect()) {
            assertThat(ping(again, EXPECTED_MILLIS)).isEqualTo("+PONG");
        }
    }

    @Test
    void cutConnectionsKeepsTheBlackhole() throws IOException {
        proxy.blackhole();
        try (Socket socket = connect()) {
            assertThat(proxy.awaitOpenConnections(1, WAIT)).isTrue();
            proxy.cutConnections();
            assertClosedByProxy(socket);
        }
        try (Socket socket = connect()) {
            assertThat(ping(socket, SILENCE_MILLIS, true)).isNull();
        }
    }

    @Test
    void targetDownResetsClientsWhenForwarding() throws IOException {
        try (RedisServer other = RedisServer.start(); TcpProxy toOther = TcpProxy.start(other.host(), other.port())) {
            try (Socket socket = connect(toOther)) {
                assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
                other.kill();
                assertClosedByProxy(socket);
            }
            // Target down: the connection is accepted, then reset at once (the reset can even beat connect()).
            try (Socket socket = new Socket()) {
                boolean connected;
                try {
                    socket.connect(new InetSocketAddress(toOther.host(), toOther.port()), EXPECTED_MILLIS);
                    connected = true;
                } catch (SocketException e) {
                    assertThat(e).isNotInstanceOf(ConnectException.class).hasMessageContaining("reset");
                    connected = false;
                }
                if (connected) {
                    assertClosedByProxy(socket);
                }
            }
            assertThat(toOther.awaitOpenConnections(0, WAIT)).isTrue();
        }
    }

    @Test
    void closeStopsListeningAndClosesConnections() throws IOException, InterruptedException {
        try (Socket socket = connect()) {
            assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
            List<Thread> threads = threads(proxy);
            assertThat(threads).hasSize(3);

            proxy.close();

            assertThat(proxy.openConnections()).isZero();
            assertClosedByProxy(socket);
            // The accept thread only ends once the listening socket is closed; all threads end.
            long deadline = System.nanoTime() + WAIT.toNanos();
            for (Thread thread : threads) {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                assertThat(thread.isAlive()).as(thread.getName()).isFalse();
            }
        }
        // (Not asserting "connection refused": on a busy machine another process may already have taken the port.)
        proxy.close(); // idempotent
        assertThat(proxy.toString()).contains("closed");
    }

    @Test
    void delayHoldsEveryReplyInOrderUntilSetBackToZero() throws IOException {
        Duration latency = Duration.ofMillis(200);
        proxy.delay(latency);
        assertThat(proxy.delay()).isEqualTo(latency);
        assertThat(proxy.toString()).contains("replies delayed 200 ms");
        try (Socket socket = connect()) {
            long start = System.nanoTime();
            assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(latency);

            // 500 pipelined INCRs: every reply in order, late by the latency once, not once per chunk
            int count = 500;
            StringBuilder pipeline = new StringBuilder();
            for (int i = 0; i < count; i++) {
                pipeline.append("*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n");
            }
            start = System.nanoTime();
            send(socket, pipeline.toString());
            socket.setSoTimeout(EXPECTED_MILLIS);
            for (int i = 1; i <= count; i++) {
                assertThat(Resp.readLine(socket.getInputStream())).isEqualTo(":" + i);
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            assertThat(elapsed).isGreaterThanOrEqualTo(latency).isLessThan(latency.multipliedBy(10));

            // a reply of several buffers arrives whole
            String big = "x".repeat(100_000);
            assertThat(redis.command("SET", "big", big)).isEqualTo("OK");
            assertThat(Resp.command(proxy.host(), proxy.port(), WAIT, "GET", "big")).isEqualTo(big);

            proxy.delay(Duration.ZERO);
            assertThat(proxy.toString()).doesNotContain("delayed");
            start = System.nanoTime();
            assertThat(ping(socket, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(latency);
        }
    }

    @Test
    void delayedConnectionsDoNotHoldEachOtherUp() throws IOException {
        String big = "y".repeat(4 << 20);
        assertThat(redis.command("SET", "big", big)).isEqualTo("OK");
        proxy.delay(Duration.ofMillis(50));
        try (Socket stuck = connect(); Socket other = connect()) {
            // a client that never reads: its delivery blocks once the socket buffers are full (12 MB > any buffer)
            send(stuck, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".repeat(3));
            assertThat(ping(other, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(ping(other, EXPECTED_MILLIS)).isEqualTo("+PONG");
            assertThat(threads(proxy)).extracting(Thread::getName)
                .contains("tcp-proxy-" + proxy.port() + "-conn1-delay", "tcp-proxy-" + proxy.port() + "-conn2-delay");
        }
        assertThat(proxy.awaitOpenConnections(0, WAIT)).isTrue();
    }

    @Test
    void blackholeWinsOverDelay() throws IOException {
        proxy.delay(Duration.ofMillis(SILENCE_MILLIS / 2));
        try (Socket socket = connect()) {
            send(socket, PING);
            proxy.blackhole(); // the PONG is held by the delay when the route drops
            assertNoReply(socket);
        }
    }

    @Test
    void rejectsBadDelays() {
        assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> proxy.delay(null)).isInstanceOf(NullPointerException.class);
        assertThat(proxy.delay()).isZero();
    }

    @Test
    void rejectsBadTargets() {
        assertThatThrownBy(() -> TcpProxy.start("127.0.0.1", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TcpProxy.start("127.0.0.1", 65_536)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TcpProxy.start(null, 6379)).isInstanceOf(NullPointerException.class);
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** The live threads of a proxy, found by name. */
    private static List<Thread> threads(TcpProxy target) {
        String prefix = "tcp-proxy-" + target.port() + "-";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(prefix))
                .toList();
    }

    private Socket connect() throws IOException {
        return connect(proxy);
    }

    private static Socket connect(TcpProxy target) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(target.host(), target.port()), EXPECTED_MILLIS);
            socket.setTcpNoDelay(true);
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    private static void send(Socket socket, String command) throws IOException {
        send(socket, command.getBytes(StandardCharsets.US_ASCII));
    }

    private static void send(Socket socket, byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    private static String ping(Socket socket, int timeoutMillis) throws IOException {
        return ping(socket, timeoutMillis, false);
    }

    /** Sends PING and reads one reply line; with {@code expectSilence}, returns null on a read timeout. */
    private static String ping(Socket socket, int timeoutMillis, boolean expectSilence) throws IOException {
        send(socket, PING);
        socket.setSoTimeout(timeoutMillis);
        try {
            return Resp.readLine(socket.getInputStream());
        } catch (SocketTimeoutException e) {
            if (expectSilence) {
                return null;
            }
            throw e;
        }
    }

    /** Nothing arrives within {@link #SILENCE_MILLIS}, and the connection is not closed either. */
    private static void assertNoReply(Socket socket) throws IOException {
        socket.setSoTimeout(SILENCE_MILLIS);
        assertThatThrownBy(() -> socket.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
    }

    /** The next read sees the proxy's close: end of stream or connection reset, not a timeout. */
    private static void assertClosedByProxy(Socket socket) throws IOException {
        socket.setSoTimeout(EXPECTED_MILLIS);
        try {
            InputStream in = socket.getInputStream();
            int b;
            do {
                b = in.read(); // skip any reply still buffered
            } while (b >= 0);
        } catch (SocketTimeoutException e) {
            fail("connection still open after " + EXPECTED_MILLIS + " ms", e);
        } catch (SocketException e) {
            assertThat(e).hasMessageContaining("reset");
        }
    }
}
