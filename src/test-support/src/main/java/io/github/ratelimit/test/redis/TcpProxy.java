package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-test TCP proxy in front of a server (typically a {@link RedisServer}) that can turn into a network
 * <em>blackhole</em>, cut connections and add latency, to test how a client behaves when Redis becomes unreachable
 * or slow.
 *
 * <p>The proxy listens on {@code 127.0.0.1} on a free port. In the normal <em>forwarding</em> mode each accepted
 * client connection gets its own connection to the target, and bytes are copied both ways by two daemon threads
 * (plain blocking sockets, {@code TCP_NODELAY} on both sides). When either side closes, the whole proxied connection
 * is closed.
 *
 * <p>{@link #blackhole()} makes the target unreachable the way a dropped route or firewall does: bytes keep being
 * accepted and silently discarded, nothing is ever answered, and no connection is closed (no FIN, no RST), so clients
 * only notice through their own timeouts. One difference from a real blackhole: new TCP connections still complete
 * their handshake (the kernel accepts them), so a client's <em>connect</em> succeeds and its first command times out.
 *
 * <p>{@link #delay(Duration)} makes the target slow but alive: every chunk the target sends is delivered to the
 * client that much later, so each request/response round trip takes about that much longer. Bytes are never
 * reordered, and each connection is delayed on a thread of its own, so one connection never holds up another.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start(); TcpProxy proxy = TcpProxy.start(redis.host(), redis.port())) {
 *     // point the client under test at proxy.uri()
 *     proxy.blackhole();      // Redis stops answering, connections stay open
 *     proxy.restore();        // blackholed connections are reset; new connections work again
 *     proxy.cutConnections(); // every open connection is reset at once
 *     proxy.delay(Duration.ofMillis(15)); // every reply arrives 15 ms late
 *     proxy.delay(Duration.ZERO);         // replies are forwarded at once again
 * }
 * }</pre>
 *
 * <p>All threads are daemon threads named {@code tcp-proxy-PORT-...} (per connection {@code -connN-up} and
 * {@code -connN-down}, and {@code -connN-delay} once a reply of that connection was delayed); {@link #close()} stops
 * them. Instances are thread-safe.
 */
public final class TcpProxy implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TcpProxy.class);

    private static final String HOST = "127.0.0.1";
    /** Connect timeout towards the target, in milliseconds. */
    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
    private static final int BUFFER_SIZE = 8192;
    private static final int BACKLOG = 50;

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final String name;
    private final AtomicInteger connectionIds = new AtomicInteger();

    /** Guards {@link #connections}, {@link #blackholed} and {@link #closed}; notified when the connection set changes. */
    private final Object lock = new Object();
    private final Set<Connection> connections = new HashSet<>();
    private boolean blackholed;
    private boolean closed;
    /** Latency added to every chunk from the target, in nanoseconds; 0 forwards at once. */
    private volatile long delayNanos;

    private TcpProxy(String targetHost, int targetPort, ServerSocket server) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = server;
        this.name = "tcp-proxy-" + server.getLocalPort();
    }

    /**
     * Starts a proxy listening on a free port of {@code 127.0.0.1}, in forwarding mode, forwarding every connection to
     * {@code targetHost:targetPort}. The target is only contacted when a client connects: if it is down then, the
     * client's connection is reset at once (as a refused connection would be).
     *
     * @param targetHost host name or IP address of the target server
     * @param targetPort TCP port of the target server (1 to 65535)
     * @return the running proxy; {@link #close() close} it when done
     * @throws IllegalArgumentException if the port is out of range
     * @throws UncheckedIOException     if the listening socket cannot be opened
     */
    public static TcpProxy start(String targetHost, int targetPort) {
        Objects.requireNonNull(targetHost, "targetHost");
        if (targetPort < 1 || targetPort > 65_535) {
            throw new IllegalArgumentException("target port out of range: " + targetPort);
        }
        ServerSocket server = null;
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0), BACKLOG);
        } catch (IOException e) {
            closeQuietly(server);
            throw new UncheckedIOException("cannot open a listening socket on " + HOST, e);
        }
        TcpProxy proxy = new TcpProxy(targetHost, targetPort, server);
        daemon(proxy::acceptLoop, proxy.name + "-accept").start();
        return proxy;
    }

    /**
     * The host the proxy listens on.
     *
     * @return always {@code 127.0.0.1}
     */
    public String host() {
        return HOST;
    }

    /**
     * The TCP port the proxy listens on, chosen at {@link #start(String, int) start}.
     *
     * @return the port number
     */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * The proxy address as a URI for Redis clients such as Lettuce.
     *
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String uri() {
        return "redis://" + HOST + ":" + port();
    }

    /**
     * Turns the proxy into a blackhole, from the moment this method returns until {@link #restore()}:
     * <ul>
     *   <li>on open connections, bytes from the client are read and dropped (never forwarded to the target) and bytes
     *       from the target are read and dropped (never delivered to the client);</li>
     *   <li>new connections are accepted (the TCP handshake completes) but never connected to the target: whatever the
     *       client sends is read and dropped, and nothing is ever answered;</li>
     *   <li>no connection is closed by the proxy (no FIN, no RST), even if the target closes its side; a client closing
     *       its own connection still closes it.</li>
     * </ul>
     * Bytes already being copied when this is called may still get through (like packets in flight). Idempotent.
     */
    public void blackhole() {
        synchronized (lock) {
            blackholed = true;
            for (Connection connection : connections) {
                connection.blackholed = true;
            }
        }
    }

    /**
     * Ends a {@link #blackhole() blackhole}: new connections are forwarded to the target again. Every connection that
     * was open during the blackhole (opened before or during it) is <strong>closed abruptly at this moment</strong>
     * (the client sees a connection reset, RST), because bytes were dropped in both directions and its stream can no
     * longer be trusted, as when a peer forgot the connection while unreachable; clients are expected to reconnect.
     * Connections opened after this call are unaffected. Does nothing in forwarding mode.
     */
    public void restore() {
        List<Connection> blackholedConnections;
        synchronized (lock) {
            blackholed = false;
            blackholedConnections = connections.stream().filter(connection -> connection.blackholed).toList();
        }
        blackholedConnections.forEach(connection -> connection.close(true));
    }

    /**
     * Makes the target slow but alive: from the moment this method returns, every chunk of bytes the target sends is
     * delivered to its client {@code latency} after the proxy read it, on every open and new connection. Only the
     * direction target to client is delayed (bytes from clients reach the target at once), so each request/response
     * round trip takes about {@code latency} longer, a command still runs on the target when it would have, and only
     * its reply is late, as on a slow or congested link. Finer points:
     * <ul>
     *   <li>bytes are never reordered: a chunk is delivered after every chunk read before it on its connection, so
     *       lowering the latency (or {@link Duration#ZERO}) first lets the chunks already held go out, then forwards
     *       new ones with the new latency;</li>
     *   <li>each connection delivers its delayed chunks on a thread of its own ({@code tcp-proxy-PORT-connN-delay},
     *       started with its first delayed chunk), so a slow or stuck client holds up no other connection; latency
     *       applies per chunk, not cumulatively: a stream of replies is late by {@code latency}, not by
     *       {@code latency} times their number;</li>
     *   <li>the precision is the platform's sleep granularity (typically well under a millisecond on Linux, more on a
     *       loaded machine); a chunk is never delivered early;</li>
     *   <li>{@link #blackhole()} still wins: a delayed chunk due while the proxy is blackholed is dropped; closing a
     *       connection drops its chunks not yet delivered;</li>
     *   <li>connect and close are not delayed: a target closing its side is passed on after the chunks it sent
     *       before.</li>
     * </ul>
     * {@code delay(Duration.ZERO)} (the initial state) restores forwarding at once: with no delayed chunk pending, a
     * connection copies bytes exactly as a proxy that was never delayed.
     *
     * @param latency added to every chunk from the target; zero or positive (nanosecond resolution, delivered to
     *                within about a millisecond)
     * @throws NullPointerException     if {@code latency} is null
     * @throws IllegalArgumentException if {@code latency} is negative
     */
    public void delay(Duration latency) {
        Objects.requireNonNull(latency, "latency");
        if (latency.isNegative()) {
            throw new IllegalArgumentException("latency must not be negative: " + latency);
        }
        delayNanos = latency.toNanos();
    }

    /**
     * The latency currently added to every chunk from the target, see {@link #delay(Duration)}.
     *
     * @return the latency, {@link Duration#ZERO} when replies are forwarded at once
     */
    public Duration delay() {
        return Duration.ofNanos(delayNanos);
    }

    /**
     * Whether the proxy is in {@link #blackhole() blackhole} mode.
     *
     * @return {@code true} between {@link #blackhole()} and {@link #restore()}
     */
    public boolean isBlackholed() {
        synchronized (lock) {
            return blackholed;
        }
    }

    /**
     * Closes every open client connection abruptly (the client sees a connection reset, RST, on its next read or
     * write) together with its connection to the target. The proxy keeps listening in its current mode (forwarding
     * or blackhole), so clients can reconnect at once.
     */
    public void cutConnections() {
        List<Connection> open;
        synchronized (lock) {
            open = List.copyOf(connections);
        }
        open.forEach(connection -> connection.close(true));
    }

    /**
     * The number of client connections currently open through the proxy: accepted and not yet closed by the client,
     * the target (in forwarding mode) or the proxy. Clients connect asynchronously, so a connection may be counted a
     * little after the client's {@code connect} returned; see {@link #awaitOpenConnections(int, Duration)}.
     *
     * @return the number of open client connections
     */
    public int openConnections() {
        synchronized (lock) {
            return connections.size();
        }
    }

    /**
     * Waits until exactly {@code expected} client connections are {@link #openConnections() open}.
     *
     * @param expected the number of open connections to wait for
     * @param timeout  how long to wait at most (millisecond resolution)
     * @return {@code true} once the count equals {@code expected}, {@code false} if it still differs after the timeout
     * @throws IllegalStateException if the waiting thread is interrupted (its interrupt flag is set again)
     */
    public boolean awaitOpenConnections(int expected, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (connections.size() != expected) {
                long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMillis <= 0) {
                    return false;
                }
                try {
                    lock.wait(remainingMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for proxy connections", e);
                }
            }
            return true;
        }
    }

    /**
     * Stops listening (new connections are refused) and closes every open connection abruptly (RST), which ends all
     * of the proxy's threads. Idempotent.
     */
    @Override
    public void close() {
        List<Connection> open;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            open = List.copyOf(connections);
        }
        closeQuietly(server);
        open.forEach(connection -> connection.close(true));
    }

    /**
     * Describes this proxy.
     *
     * @return the listening URI, the target, the mode and the number of open connections
     */
    @Override
    public String toString() {
        synchronized (lock) {
            long delay = delayNanos;
            return "TcpProxy[" + uri() + " -> " + targetHost + ":" + targetPort
                    + (closed ? ", closed" : blackholed ? ", blackholed" : ", forwarding")
                    + (delay > 0 ? ", replies delayed " + Duration.ofNanos(delay).toMillis() + " ms" : "")
                    + ", " + connections.size() + " open]";
        }
    }

    // ---------------------------------------------------------------------------------------------------------------

    private void acceptLoop() {
        while (true) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
                log.debug("{}: accept failed", name, e);
                continue;
            }
            Connection connection = new Connection(connectionIds.incrementAndGet(), client);
            synchronized (lock) {
                if (closed) {
                    closeSocket(client, true);
                    return;
                }
                connection.blackholed = blackholed;
                connections.add(connection);
                lock.notifyAll();
            }
            daemon(connection::clientToTarget, name + "-conn" + connection.id + "-up").start();
        }
    }

    /** One client connection and, unless it started blackholed, its connection to the target. */
    private final class Connection {

        final int id;
        final Socket client;
        /** Set (never cleared) when the connection is blackholed; a blackholed connection is closed by restore(). */
        volatile boolean blackholed;
        volatile Socket upstream;
        final AtomicBoolean done = new AtomicBoolean();
        /**
         * Chunks from the target held for {@link #delay(Duration)}, in the order read; written by the "-delay" thread
         * (started with the first one). An empty array stands for the target's end of stream, passed on in order.
         */
        private final BlockingQueue<DelayedChunk> delayed = new LinkedBlockingQueue<>();
        /** Chunks handed to {@link #delayed} and not yet written (or dropped); only the "-down" thread adds. */
        private final AtomicInteger pendingChunks = new AtomicInteger();
        private Thread delivery;

        Connection(int id, Socket client) {
            this.id = id;
            this.client = client;
        }

        /** Runs on the "-up" thread: connects to the target, then copies (or drops) client bytes until EOF. */
        void clientToTarget() {
            try {
                client.setTcpNoDelay(true);
                if (!blackholed && !connectUpstream()) {
                    return;
                }
                InputStream in = client.getInputStream();
                byte[] buffer = new byte[BUFFER_SIZE];
                int count;
                while ((count = in.read(buffer)) >= 0) {
                    Socket target = upstream;
                    if (!blackholed && target != null) {
                        OutputStream out = target.getOutputStream();
                        out.write(buffer, 0, count);
                        out.flush();
                    }
                }
                close(false);
            } catch (IOException e) {
                log.debug("{} connection {}: client side ended: {}", name, id, e.toString());
                close(true);
            }
        }

        /**
         * Connects to the target and starts the "-down" thread; returns whether copying should go on. A failed connect
         * resets the client, unless the connection got blackholed meanwhile (then the client just hangs).
         */
        private boolean connectUpstream() {
            Socket target = new Socket();
            try {
                target.setTcpNoDelay(true);
                target.connect(new InetSocketAddress(targetHost, targetPort), CONNECT_TIMEOUT_MILLIS);
            } catch (IOException e) {
                closeSocket(target, true);
                log.debug("{} connection {}: cannot connect to {}:{}: {}", name, id, targetHost, targetPort,
                        e.toString());
                if (blackholed) {
                    return true;
                }
                close(true);
                return false;
            }
            upstream = target;
            if (done.get()) { // closed while connecting: close() may not have seen the upstream socket
                closeSocket(target, true);
                return false;
            }
            daemon(() -> targetToClient(target), name + "-conn" + id + "-down").start();
            return true;
        }

        /** Runs on the "-down" thread: copies (or drops) target bytes until EOF. */
        private void targetToClient(Socket target) {
            try {
                InputStream in = target.getInputStream();
                OutputStream out = client.getOutputStream();
                byte[] buffer = new byte[BUFFER_SIZE];
                int count;
                while ((count = in.read(buffer)) >= 0) {
                    if (blackholed) {
                        continue;
                    }
                    long delay = delayNanos;
                    if (delay == 0 && pendingChunks.get() == 0) { // nothing held back: forward at once, as ever
                        out.write(buffer, 0, count);
                        out.flush();
                    } else {
                        hold(Arrays.copyOf(buffer, count), System.nanoTime() + delay);
                    }
                }
                if (pendingChunks.get() == 0) {
                    targetEnded(false);
                } else {
                    hold(new byte[0], 0); // the end of stream goes after the chunks still held
                }
            } catch (IOException e) {
                log.debug("{} connection {}: target side ended: {}", name, id, e.toString());
                targetEnded(true);
            }
        }

        /** Runs on the "-down" thread: queues a chunk for the "-delay" thread, starting it on the first one. */
        private void hold(byte[] chunk, long dueNanos) {
            pendingChunks.incrementAndGet();
            delayed.add(new DelayedChunk(chunk, dueNanos));
            if (delivery == null) {
                delivery = daemon(this::deliverDelayed, name + "-conn" + id + "-delay");
                delivery.start();
            }
        }

        /**
         * Runs on the "-delay" thread: writes the held chunks in order, each once it is due, until the connection is
         * closed. The count of pending chunks drops only after a chunk is written, so the "-down" thread forwards
         * directly again only once everything held before is out.
         */
        private void deliverDelayed() {
            try {
                OutputStream out = client.getOutputStream();
                while (!done.get()) {
                    DelayedChunk chunk = delayed.poll(100, TimeUnit.MILLISECONDS);
                    if (chunk == null) {
                        continue;
                    }
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait); // the injected latency itself, not a synchronisation
                    }
                    if (chunk.bytes().length == 0) {
                        targetEnded(false);
                        return;
                    }
                    if (!blackholed && !done.get()) {
                        out.write(chunk.bytes());
                        out.flush();
                    }
                    pendingChunks.decrementAndGet();
                }
            } catch (IOException e) {
                log.debug("{} connection {}: delayed delivery ended: {}", name, id, e.toString());
                close(true);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close(true);
            }
        }

        /** The target closed or failed: pass it on to the client, unless blackholed (then the client sees nothing). */
        private void targetEnded(boolean abort) {
            if (blackholed) {
                closeSocket(upstream, abort);
            } else {
                close(abort);
            }
        }

        /** Closes both sides, with RST if {@code abort}, else with FIN; idempotent. */
        void close(boolean abort) {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            synchronized (lock) {
                connections.remove(this);
                lock.notifyAll();
            }
            closeSocket(client, abort);
            Socket target = upstream;
            if (target != null) {
                closeSocket(target, abort);
            }
        }
    }

    /** Bytes from the target, to be written to the client at {@code dueNanos} ({@link System#nanoTime()}). */
    private record DelayedChunk(byte[] bytes, long dueNanos) {
    }

    private static void closeSocket(Socket socket, boolean abort) {
        if (socket == null) {
            return;
        }
        if (abort) {
            try {
                socket.setSoLinger(true, 0); // close() then sends RST instead of FIN
            } catch (IOException e) {
                // already closed
            }
        }
        try {
            socket.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }

    private static void closeQuietly(ServerSocket socket) {
        if (socket == null) {
            return;
        }
        try {
            socket.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }

    private static Thread daemon(Runnable task, String threadName) {
        Thread thread = new Thread(task, threadName);
        thread.setDaemon(true);
        return thread;
    }
}
