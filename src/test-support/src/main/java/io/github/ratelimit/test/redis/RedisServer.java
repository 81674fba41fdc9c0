package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One real Redis server process, started from the {@code redis-server} binary on the {@code PATH}, listening on
 * {@code 127.0.0.1} on a free TCP port, without persistence, in its own temporary directory.
 *
 * <p>The process is a child of the test JVM (not daemonized: see {@code RedisProcess}) controlled through its pid (read
 * from its pidfile) with POSIX signals, so tests can
 * stop, kill, pause and restart it to exercise failure handling. Every server that is not {@link #close() closed} is
 * killed by a JVM shutdown hook, so none outlives the test JVM.
 *
 * <p>Requires a POSIX system with {@code redis-server} and {@code kill} on the {@code PATH}. Instances are thread-safe.
 */
public final class RedisServer implements AutoCloseable {

    private static final String HOST = RedisProcess.HOST;
    /** Upper bound of every wait (start, stop, kill, pause), in milliseconds. */
    private static final long WAIT_MILLIS = RedisProcess.WAIT_MILLIS;

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
        return RedisProcess.startInFreshDirectory("redis-server-", OPEN, RedisServer::new, RedisServer::launch,
                RedisServer::close);
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
     * if it is still open after about 10 seconds, sends SIGKILL (and waits up to about 30 more). Does nothing if the
     * server is not running.
     */
    public synchronized void stop() {
        if (pid < 0) {
            return;
        }
        signal("CONT");
        signal("TERM");
        if (!RedisProcess.await(() -> RedisProcess.portClosed(port), WAIT_MILLIS)) {
            signal("KILL");
            RedisProcess.awaitPortClosed(port);
        }
        pid = -1;
    }

    /**
     * Kills the server abruptly (SIGKILL, as in a crash) and waits (at most about 30 seconds) until the port is closed.
     * Does nothing if the server is not running.
     */
    public synchronized void kill() {
        if (pid < 0) {
            return;
        }
        signal("KILL");
        RedisProcess.awaitPortClosed(port);
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
        pid = RedisProcess.launch(dir, port, List.of());
    }

    /** Sends a signal with {@code kill -SIG pid}. */
    private void signal(String name) {
        if (pid < 0) {
            throw new IllegalStateException(this + " is not running");
        }
        RedisProcess.signal(pid, name);
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
        boolean reached = RedisProcess.await(() -> {
            String text = RedisProcess.readLines(stat).stream().findFirst().orElse("");
            int end = text.lastIndexOf(')'); // the command name in parentheses may contain spaces
            boolean isStopped = end > 0 && text.length() > end + 2 && text.charAt(end + 2) == 'T';
            return isStopped == stopped;
        }, WAIT_MILLIS);
        if (!reached) {
            throw new IllegalStateException(this + " did not " + (stopped ? "stop" : "continue") + " in time");
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
        RedisProcess.deleteDirectory(dir);
    }
}
