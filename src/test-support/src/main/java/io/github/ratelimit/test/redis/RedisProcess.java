package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The process control shared by {@link RedisServer} and the nodes of a {@link RedisCluster}: a {@code redis-server},
 * a child process of this JVM (not daemonized), on {@code 127.0.0.1} with its pidfile, log and data in a directory of
 * its own, controlled by POSIX signals ({@code kill}) and watched through its TCP port. Every wait is a bounded polling loop.
 */
final class RedisProcess {

    /** Attempts of {@link #startOnAFreePort} before giving up. */
    static final int START_ATTEMPTS = 3;

    /** The address every test Redis listens on. */
    static final String HOST = "127.0.0.1";
    /** Upper bound of every wait (start, stop, kill, pause), in milliseconds. */
    static final long WAIT_MILLIS = 10_000;
    /**
     * Upper bound of the wait for a SIGKILLed server's port to close, in milliseconds: the process closes its sockets
     * only when it runs its exit, and on a machine whose cores are busy (stress-ng) it once waited more than
     * {@link #WAIT_MILLIS} for the CPU to do so. The wait ends as soon as the port is closed.
     */
    static final long KILL_WAIT_MILLIS = 30_000;
    /** Pause between two polls of a wait, in milliseconds. */
    private static final long POLL_MILLIS = 10;
    /** Connect timeout of a port probe and timeout of a start-up PING. */
    static final Duration PROBE_TIMEOUT = Duration.ofMillis(200);

    /** The {@code redis-server} the tests start: the one on the {@code PATH}. */
    static final String BINARY = "redis-server";

    private RedisProcess() {
    }

    /**
     * Starts {@code redis-server} (a child process of this JVM, not daemonized) without persistence in {@code dir}, listening on
     * {@code 127.0.0.1:port}, and waits (at most {@link #WAIT_MILLIS}) until its own pidfile exists and the port
     * answers {@code PING} from that very process ({@code INFO server} names its pid).
     *
     * @param dir       the process's directory (pidfile {@code redis.pid}, log {@code redis.log}, launcher output)
     * @param port      the client port
     * @param extraArgs further {@code redis-server} arguments, e.g. cluster settings
     * @return the pid of the running server
     * @throws IllegalStateException if it does not come up (the message holds the tail of its log); a process that
     *                               started but did not answer is killed
     */
    /**
     * Starts a server on a free port, trying again on another one when it does not come up: a free port can be taken
     * by someone else before Redis binds it.
     *
     * @param attempt one start on a fresh free port; throws {@link IllegalStateException} when the server does not
     *                come up (having cleaned up after itself)
     * @param <T>     the server's type
     * @return the first server that came up, of {@link #START_ATTEMPTS} attempts
     * @throws IllegalStateException the first attempt's failure, the later ones suppressed in it
     */
    static <T> T startOnAFreePort(java.util.function.Supplier<T> attempt) {
        IllegalStateException failure = null;
        for (int i = 0; i < START_ATTEMPTS; i++) {
            try {
                return attempt.get();
            } catch (IllegalStateException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        throw failure;
    }

    /** Creates the object of a server to start in a fresh directory on a free port (writing any files it needs). */
    @FunctionalInterface
    interface Factory<T> {

        /**
         * Creates the server's object; starts nothing.
         *
         * @param dir  its fresh temporary directory
         * @param port its free port
         * @return the server, not running yet
         * @throws IOException if a file it needs cannot be written
         */
        T create(Path dir, int port) throws IOException;
    }

    /**
     * Starts a server in a fresh temporary directory on a free port ({@link #startOnAFreePort}): creates it, adds it
     * to {@code open} (the servers a shutdown hook kills), launches it while holding its lock, and closes it when it
     * does not come up.
     *
     * @param prefix  the directory name's prefix, e.g. {@code redis-server-}
     * @param open    the open servers of its type
     * @param factory creates the server
     * @param launch  launches it; throws {@link IllegalStateException} when it does not come up
     * @param close   stops it and deletes its directory
     * @param <T>     the server's type
     * @return the running server
     * @throws IllegalStateException if no attempt came up
     * @throws UncheckedIOException  if the directory or a file in it cannot be written
     */
    static <T> T startInFreshDirectory(String prefix, Set<T> open, Factory<T> factory, Consumer<T> launch,
            Consumer<T> close) {
        return startOnAFreePort(() -> {
            T server;
            try {
                server = factory.create(Files.createTempDirectory(prefix), freePorts(1)[0]);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot prepare a Redis server directory or port", e);
            }
            open.add(server);
            try {
                synchronized (server) {
                    launch.accept(server);
                }
                return server;
            } catch (IllegalStateException e) {
                close.accept(server);
                throw e;
            }
        });
    }

    static long launch(Path dir, int port, List<String> extraArgs) {
        return launch(dir, List.of("--port", Integer.toString(port)), port, extraArgs,
                (timeout, args) -> Resp.command(HOST, port, timeout, args));
    }

    /**
     * Sends one command to a server and renders its reply, as {@link Resp#command} does (for a server that needs
     * TLS or authentication, a client that brings them).
     */
    @FunctionalInterface
    interface Client {

        /**
         * Sends one command.
         *
         * @param timeout connect and read timeout
         * @param args    command name and arguments
         * @return the reply rendered as text
         * @throws IllegalStateException if Redis replies with an error
         * @throws UncheckedIOException  if the connection fails or the read times out
         */
        String command(Duration timeout, String... args);
    }

    /**
     * Starts {@code redis-server} as {@link #launch(Path, int, List)} does, with other listening arguments (e.g.
     * {@code --port 0 --tls-port P}) and waits until {@code client} gets {@code PONG} from that very process.
     *
     * @param dir        the process's directory
     * @param listen     the arguments saying where it listens, e.g. {@code --port P}
     * @param port       the port {@code client} talks to (for messages)
     * @param extraArgs  further {@code redis-server} arguments
     * @param client     how to talk to it (plain RESP, or TLS and AUTH)
     * @return the pid of the running server
     * @throws IllegalStateException if it does not come up (the message holds the tail of its log)
     */
    static long launch(Path dir, List<String> listen, int port, List<String> extraArgs, Client client) {
        Path pidFile = dir.resolve("redis.pid");
        Path logFile = dir.resolve("redis.log");
        try {
            Files.deleteIfExists(pidFile);
            Files.deleteIfExists(dir.resolve("dump.rdb"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = new ArrayList<>(List.of(BINARY,
                "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                "--daemonize", "no", "--pidfile", pidFile.toString(), "--logfile", logFile.toString(),
                "--bind", HOST));
        command.addAll(listen);
        command.addAll(extraArgs);
        // Not daemonized: the server stays a child of this JVM, in its session. A daemon calls setsid(), and with the
        // kernel's autogroup scheduling (sched_autogroup_enabled=1, as on the machines these tests run on) a new
        // session is a scheduling group of its own; under a full CPU load such a server was seen runnable but not
        // run for 8 s while the JVM and the load ran on (stressed run 72, sampled from /proc/<pid>/stat: state R,
        // CPU time still, no page faults). In the JVM's group it is one more task among the JVM's threads.
        Process server;
        try {
            server = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("launcher.out").toFile()).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run redis-server (is it installed and on the PATH?): " + e, e);
        }
        AtomicLong started = new AtomicLong(-1);
        boolean answered = await(() -> {
            if (!server.isAlive()) {
                throw failure(dir, port, "redis-server exited with " + server.exitValue());
            }
            started.set(readPid(pidFile)); // written just before the event loop starts
            if (started.get() > 0 && ping(client)) {
                return true;
            }
            if (logShowsBindFailure(logFile)) {
                throw failure(dir, port, "redis-server could not listen on port " + port);
            }
            return false;
        }, WAIT_MILLIS);
        long pid = started.get();
        if (!answered) {
            if (pid > 0) {
                signal(pid, "KILL");
            }
            throw failure(dir, port, "redis-server did not answer PING within " + WAIT_MILLIS + " ms");
        }
        // The PONG must come from our process, not from another server that grabbed the port. A server that has just
        // answered PING may still be slow to answer on a machine loaded by other jobs: wait as long as for the start.
        String info = client.command(java.time.Duration.ofMillis(WAIT_MILLIS), "INFO", "server");
        if (!info.contains("process_id:" + pid + "\r")) {
            signal(pid, "KILL");
            throw failure(dir, port, "port " + port + " is answered by another Redis process");
        }
        return pid;
    }

    /**
     * Sends a signal with {@code kill -NAME pid}. A non-zero exit of {@code kill} means the process is already gone:
     * the port waits that follow tell the truth.
     *
     * @param pid  the process
     * @param name the signal, e.g. {@code KILL}, {@code STOP}
     */
    static void signal(long pid, String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!kill.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + name + " " + pid + " did not return");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + name + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling " + pid, e);
        }
    }

    /**
     * Kills a process abruptly (SIGKILL, as in a crash) and waits (at most {@link #KILL_WAIT_MILLIS}) until its port
     * is closed.
     *
     * @param pid  the process
     * @param port its client port
     * @throws IllegalStateException if the port is still open after the wait
     */
    static void kill(long pid, int port) {
        signal(pid, "KILL");
        awaitPortClosed(port);
    }

    /**
     * Waits (at most {@link #KILL_WAIT_MILLIS}) until nobody listens on a port.
     *
     * @param port the port
     * @throws IllegalStateException if it is still open after the wait
     */
    static void awaitPortClosed(int port) {
        if (!await(() -> portClosed(port), KILL_WAIT_MILLIS)) {
            throw new IllegalStateException("port " + port + " still open " + KILL_WAIT_MILLIS + " ms after SIGKILL");
        }
    }

    /**
     * Whether a connection to a port of {@code 127.0.0.1} is refused (nobody listens).
     *
     * @param port the port
     * @return {@code true} if refused; {@code false} if accepted or if the probe timed out
     */
    static boolean portClosed(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), (int) PROBE_TIMEOUT.toMillis());
            return false;
        } catch (ConnectException e) {
            return true; // refused: nobody listens
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Polls a condition every 10 ms until it holds or the time is up.
     *
     * @param condition     the condition
     * @param timeoutMillis the time limit, in milliseconds
     * @return whether the condition held in time
     */
    static boolean await(BooleanSupplier condition, long timeoutMillis) {
        try {
            Awaitility.await()
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(POLL_MILLIS))
                .atMost(Duration.ofMillis(timeoutMillis))
                .until(condition::getAsBoolean);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    /** Lowest port {@link #freePorts} hands out. */
    static final int LOWEST_PORT = 15_000;

    /**
     * Free TCP ports of {@code 127.0.0.1}, distinct from each other, below the kernel's ephemeral range less 10,000
     * (so from 15,000 to 22,767 with Linux's default range starting at 32,768), each with its port + 10,000 (a Cluster
     * node's bus) free too. Below the ephemeral range, because a server restarted on its port must find it free: a
     * port the kernel hands out for outgoing connections or port-0 listeners can be taken by any other socket of the
     * test JVM while the server is down ("Address already in use"). Test JVMs forked side by side (system properties
     * {@code test.redis.fork}, 1-based, and {@code test.redis.forks}, set by the build) each take a slice of
     * that range of their own, so that a server one fork restarts on its port cannot find it taken by another fork's
     * new server. Another process may still take one before it is bound: callers retry.
     *
     * @param count how many
     * @return the ports
     * @throws IOException if no port can be had
     */
    static int[] freePorts(int count) throws IOException {
        int highest = ephemeralLow() - 10_001;
        if (highest <= LOWEST_PORT + 100) { // an unusual range: any free port
            return anyFreePorts(count);
        }
        int lowest = LOWEST_PORT;
        int fork = Integer.getInteger("test.redis.fork", 1);
        int forks = Integer.getInteger("test.redis.forks", 1);
        if (forks > 1 && fork >= 1 && fork <= forks) {
            int slice = (highest - LOWEST_PORT + 1) / forks;
            lowest = LOWEST_PORT + (fork - 1) * slice;
            highest = lowest + slice - 1;
        }
        Set<Integer> chosen = new LinkedHashSet<>();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1_000 && chosen.size() < count; attempt++) {
            int port = random.nextInt(lowest, highest + 1);
            if (!chosen.contains(port) && bindable(port) && bindable(port + 10_000)) {
                chosen.add(port);
            }
        }
        if (chosen.size() < count) {
            throw new IOException("no " + count + " free ports between " + lowest + " and " + highest);
        }
        return chosen.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The first port of the kernel's ephemeral range (Linux), or 32768 when it cannot be read. */
    private static int ephemeralLow() {
        List<String> range = readLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
        try {
            return range.isEmpty() ? 32_768 : Integer.parseInt(range.get(0).trim().split("\\s+")[0]);
        } catch (NumberFormatException e) {
            return 32_768;
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int[] anyFreePorts(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST));
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    /**
     * The lines of a text file.
     *
     * @param file the file
     * @return its lines, or none if it cannot be read
     */
    static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException | UncheckedIOException e) {
            return List.of();
        }
    }

    /**
     * The last 20 lines of a file, for failure messages.
     *
     * @param file the file
     * @return a header naming the file and its tail, or {@code (no NAME)} if it cannot be read
     */
    static String tail(Path file) {
        List<String> lines = readLines(file);
        if (lines.isEmpty()) {
            return "(no " + file.getFileName() + ")";
        }
        return "--- tail of " + file.getFileName() + " ---\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }

    /**
     * Deletes a directory and everything in it; a leftover is harmless and ignored.
     *
     * @param dir the directory
     */
    static void deleteDirectory(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            // a leftover temp directory is harmless
        }
    }

    // ---------------------------------------------------------------------------------------------------------------

    private static IllegalStateException failure(Path dir, int port, String message) {
        StringBuilder text = new StringBuilder(message).append(" (redis://").append(HOST).append(':').append(port)
                .append(", dir ").append(dir).append(")");
        for (String name : List.of("launcher.out", "redis.log")) {
            if (!readLines(dir.resolve(name)).isEmpty()) {
                text.append('\n').append(tail(dir.resolve(name)));
            }
        }
        return new IllegalStateException(text.toString());
    }

    private static boolean ping(Client client) {
        try {
            return "PONG".equals(client.command(PROBE_TIMEOUT, "PING"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean logShowsBindFailure(Path logFile) {
        return readLines(logFile).stream().anyMatch(line -> line.contains("Failed listening on port")
                || line.contains("Could not create server TCP listening socket"));
    }

    private static long readPid(Path pidFile) {
        try {
            String text = Files.readString(pidFile).trim();
            return text.isEmpty() ? -1 : Long.parseLong(text);
        } catch (IOException | NumberFormatException e) {
            return -1; // not written yet, or written halfway
        }
    }
}
