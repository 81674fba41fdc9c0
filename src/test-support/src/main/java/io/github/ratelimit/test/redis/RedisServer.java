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
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * One real Redis server process, started from the {@code redis-server} binary on the {@code PATH}, listening on
 * {@code 127.0.0.1} on a free TCP port, without persistence, in its own temporary directory.
 *
 * <p>The process is daemonized and controlled through its pid (read from its pidfile) with POSIX signals, so tests can
 * stop, kill, pause and restart it to exercise failure handling. Every server that is not {@link #close() closed} is
 * killed by a JVM shutdown hook, so none outlives the test JVM.
 *
 * <p>Requires a POSIX system with {@code redis-server} and {@code kill} on the {@code PATH}. Instances are thread-safe.
 */
public final class RedisServer implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    /** Upper bound of every wait (start, stop, kill, pause), in milliseconds. */
    private static final long WAIT_MILLIS = 10_000;
    /** Pause between two polls of a wait, in milliseconds. */
    private static final long POLL_MILLIS = 10;
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(200);
    private static final int START_ATTEMPTS = 3;

    private static final Set<RedisServer> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(RedisServer::destroyQuietly),
                "redis-server-reaper"));
    }

    private final Path dir;
    private final int port;
    /** Pid of the running process, or -1 when stopped. */
    private long pid = -1;

    private RedisServer(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    /**
     * Starts a new server on a free port of {@code 127.0.0.1} in a fresh temporary directory and waits (at most about
     * 10 seconds) until it answers {@code PING}. Typically ready in about 0.1 second.
     *
     * @return the running server; {@link #close() close} it when done
     * @throws IllegalStateException if {@code redis-server} is missing or does not come up (the message holds the tail
     *                               of its log)
     */
    public static RedisServer start() {
        IllegalStateException failure = null;
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            // A free port can be taken by someone else before Redis binds it: retry on another one.
            RedisServer server = null;
            try {
                server = new RedisServer(Files.createTempDirectory("redis-server-"), freePort());
                OPEN.add(server);
                synchronized (server) {
                    server.launch();
                }
                return server;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot prepare a Redis server directory or port", e);
            } catch (IllegalStateException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
                if (server != null) {
                    server.close();
                }
            }
        }
        throw failure;
    }

    /**
     * The host the server listens on.
     *
     * @return always {@code 127.0.0.1}
     */
    public String host() {
        return HOST;
    }

    /**
     * The TCP port the server listens on; it stays the same across {@link #restart()}.
     *
     * @return the port number
     */
    public int port() {
        return port;
    }

    /**
     * The server address as a URI for Redis clients such as Lettuce.
     *
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /**
     * Sends one command with a 5 second connect and read timeout. See {@link #command(Duration, String...)}.
     *
     * @param args command name and arguments, e.g. {@code "SET", "k", "v"}
     * @return the reply rendered as text, or {@code null} for a null reply
     * @throws IllegalStateException if Redis replies with an error
     * @throws UncheckedIOException  if the connection fails or the reply does not arrive in time
     */
    public String command(String... args) {
        return command(Resp.DEFAULT_TIMEOUT, args);
    }

    /**
     * Sends one command over a new plain socket (minimal RESP2 client) and renders the reply as text: simple and bulk
     * strings as-is, integers in decimal, arrays as their elements joined with {@code '\n'} (nested arrays flattened,
     * nested null elements as {@code (nil)}, nested errors as {@code (error) MESSAGE}).
     *
     * @param timeout connect timeout and socket read timeout (millisecond resolution); a short one makes a command
     *                against a {@link #pause() paused} server fail fast
     * @param args    command name and arguments, sent as UTF-8 bulk strings
     * @return the reply rendered as text, or {@code null} for a null reply (e.g. {@code GET} of a missing key)
     * @throws IllegalStateException if Redis replies with an error
     * @throws UncheckedIOException  if the connection fails or the reply does not arrive within the timeout
     */
    public String command(Duration timeout, String... args) {
        return Resp.command(HOST, port, timeout, args);
    }

    /**
     * Deletes every key ({@code FLUSHALL}) and every cached Lua script ({@code SCRIPT FLUSH}).
     */
    public void flushAll() {
        command("FLUSHALL");
        command("SCRIPT", "FLUSH");
    }

    /**
     * Stops the server gracefully: SIGTERM (after SIGCONT, in case it is paused), then waits until the port is closed;
     * if it is still open after about 10 seconds, sends SIGKILL. Does nothing if the server is not running.
     */
    public synchronized void stop() {
        if (pid < 0) {
            return;
        }
        signal("CONT");
        signal("TERM");
        if (!await(this::portClosed, WAIT_MILLIS)) {
            signal("KILL");
            awaitPortClosed();
        }
        pid = -1;
    }

    /**
     * Kills the server abruptly (SIGKILL, as in a crash) and waits (at most about 10 seconds) until the port is closed.
     * Does nothing if the server is not running.
     */
    public synchronized void kill() {
        if (pid < 0) {
            return;
        }
        signal("KILL");
        awaitPortClosed();
        pid = -1;
    }

    /**
     * Freezes the process (SIGSTOP): connections are still accepted by the kernel but nothing is answered, as with a
     * hung server or a network partition. Undo with {@link #resume()}.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized void pause() {
        signal("STOP");
        awaitProcessState(true);
    }

    /**
     * Unfreezes a {@link #pause() paused} process (SIGCONT); pending commands are then answered.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized void resume() {
        signal("CONT");
        awaitProcessState(false);
    }

    /**
     * Stops the server and starts a new process on the same port, with an empty dataset and an empty script cache;
     * returns once it answers {@code PING}.
     *
     * @throws IllegalStateException if the new process does not come up
     */
    public synchronized void restart() {
        stop();
        launch();
    }

    /**
     * Stops the server (see {@link #stop()}) and deletes its temporary directory. Idempotent.
     */
    @Override
    public synchronized void close() {
        try {
            stop();
        } finally {
            OPEN.remove(this);
            deleteDirectory();
        }
    }

    /**
     * Describes this server.
     *
     * @return the URI and the pid (or "stopped")
     */
    @Override
    public synchronized String toString() {
        return "RedisServer[" + uri() + (pid < 0 ? ", stopped" : ", pid " + pid) + "]";
    }

    /** The temporary directory holding the pidfile and the log (for tests). */
    Path directory() {
        return dir;
    }

    // ---------------------------------------------------------------------------------------------------------------

    private void launch() {
        Path pidFile = dir.resolve("redis.pid");
        Path logFile = dir.resolve("redis.log");
        try {
            Files.deleteIfExists(pidFile);
            Files.deleteIfExists(dir.resolve("dump.rdb"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = List.of("redis-server",
                "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                "--daemonize", "yes", "--pidfile", pidFile.toString(), "--logfile", logFile.toString(),
                "--bind", HOST, "--port", Integer.toString(port));
        Path launcherOutput = dir.resolve("launcher.out");
        try {
            Process launcher = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(launcherOutput.toFile()).start();
            // With --daemonize the launched process forks the server and exits at once.
            if (!launcher.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                launcher.destroyForcibly();
                throw failure("redis-server did not daemonize");
            }
            if (launcher.exitValue() != 0) {
                throw failure("redis-server exited with " + launcher.exitValue());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run redis-server (is it installed and on the PATH?): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting redis-server", e);
        }
        // Ready when our own pidfile exists (written just before the event loop starts) and the port answers PONG.
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (true) {
            long readPid = readPid(pidFile);
            if (readPid > 0 && Resp.ping(HOST, port, POLL_TIMEOUT)) {
                pid = readPid;
                break;
            }
            if (logShowsBindFailure(logFile)) {
                throw failure("redis-server could not listen on port " + port);
            }
            if (System.nanoTime() - deadline > 0) {
                throw failure("redis-server did not answer PING within " + WAIT_MILLIS + " ms");
            }
            sleep();
        }
        // The PONG must come from our process, not from another server that grabbed the port.
        String info = command("INFO", "server");
        if (!info.contains("process_id:" + pid + "\r")) {
            signal("KILL");
            pid = -1;
            throw failure("port " + port + " is answered by another Redis process");
        }
    }

    private IllegalStateException failure(String message) {
        StringBuilder text = new StringBuilder(message).append(" (").append(uri()).append(", dir ").append(dir)
                .append(")");
        for (String name : List.of("launcher.out", "redis.log")) {
            List<String> lines = readLines(dir.resolve(name));
            if (!lines.isEmpty()) {
                text.append("\n--- tail of ").append(name).append(" ---\n")
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
            }
        }
        return new IllegalStateException(text.toString());
    }

    private static boolean logShowsBindFailure(Path logFile) {
        return readLines(logFile).stream().anyMatch(line -> line.contains("Failed listening on port")
                || line.contains("Could not create server TCP listening socket"));
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException | UncheckedIOException e) {
            return List.of();
        }
    }

    private static long readPid(Path pidFile) {
        try {
            String text = Files.readString(pidFile).trim();
            return text.isEmpty() ? -1 : Long.parseLong(text);
        } catch (IOException | NumberFormatException e) {
            return -1; // not written yet, or written halfway
        }
    }

    /** Sends a signal with {@code kill -SIG pid}. */
    private void signal(String name) {
        if (pid < 0) {
            throw new IllegalStateException(this + " is not running");
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!kill.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + name + " " + pid + " did not return");
            }
            // A non-zero exit means the process is already gone: the port waits that follow tell the truth.
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + name + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling " + this, e);
        }
    }

    /**
     * Waits until the process is (or is no longer) in the stopped state {@code T}, as reported by
     * {@code /proc/PID/stat}; returns at once where there is no {@code /proc}.
     */
    private void awaitProcessState(boolean stopped) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.isReadable(stat)) {
            return;
        }
        boolean reached = await(() -> {
            String text = readLines(stat).stream().findFirst().orElse("");
            int end = text.lastIndexOf(')'); // the command name in parentheses may contain spaces
            boolean isStopped = end > 0 && text.length() > end + 2 && text.charAt(end + 2) == 'T';
            return isStopped == stopped;
        }, WAIT_MILLIS);
        if (!reached) {
            throw new IllegalStateException(this + " did not " + (stopped ? "stop" : "continue") + " in time");
        }
    }

    private void awaitPortClosed() {
        if (!await(this::portClosed, WAIT_MILLIS)) {
            throw new IllegalStateException("port " + port + " still open " + WAIT_MILLIS + " ms after SIGKILL");
        }
    }

    private boolean portClosed() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), (int) POLL_TIMEOUT.toMillis());
            return false;
        } catch (ConnectException e) {
            return true; // refused: nobody listens
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean await(BooleanSupplier condition, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            sleep();
        }
        return true;
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server", e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        }
    }

    /** Shutdown hook: no waiting, just make sure the process and its directory are gone. */
    private void destroyQuietly() {
        try {
            synchronized (this) {
                if (pid > 0) {
                    signal("CONT");
                    signal("KILL");
                    pid = -1;
                }
            }
        } catch (RuntimeException ignored) {
            // best effort at JVM exit
        }
        deleteDirectory();
    }

    private void deleteDirectory() {
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
}
