package io.github.ratelimit.test.redis;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.redis.testcontainers.RedisContainer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.utility.DockerImageName;

/**
 * The one way for JUnit 5 tests to get a real Redis: a process-wide {@link #shared() shared} server.
 *
 * <p>Resolution order, first match wins:
 * <ol>
 *   <li>an explicit URL, {@code redis://host:port}, from the system property {@value #URL_PROPERTY} or else the
 *       environment variable {@value #URL_ENV}; used as-is and never flushed by anything but {@link #flushAll()};</li>
 *   <li>a Testcontainers {@code redis:7.0.15} container when Docker is available (a developer laptop);</li>
 *   <li>a {@link RedisServer} started from the {@code redis-server} binary on the {@code PATH} (CI).</li>
 * </ol>
 * The choice is logged once. Tests sharing it must not run concurrently with each other's {@link #flushAll()}: use
 * distinct keys, or run those test classes sequentially (JUnit's default).
 */
public final class TestRedis {

    /** Environment variable naming an external Redis to use, as {@code redis://host:port}. */
    public static final String URL_ENV = "RATELIMIT_TEST_REDIS_URL";
    /** System property naming an external Redis to use, as {@code redis://host:port}; wins over {@value #URL_ENV}. */
    public static final String URL_PROPERTY = "ratelimit.test.redis.url";
    /** Docker image used when Testcontainers finds Docker (same version as the Debian {@code redis-server}). */
    static final String IMAGE = "redis:7.0.15";

    private static final Logger log = LoggerFactory.getLogger(TestRedis.class);
    private static TestRedis shared;

    private final String host;
    private final int port;
    private final String uri;
    private final String source;

    private TestRedis(String host, int port, String uri, String source) {
        this.host = host;
        this.port = port;
        this.uri = uri;
        this.source = source;
    }

    /**
     * The process-wide Redis, created on first use (thread-safe). Servers it starts live until the JVM exits.
     *
     * @return the shared instance
     * @throws IllegalStateException if no Redis can be obtained; the message says how to provide one
     */
    public static synchronized TestRedis shared() {
        if (shared == null) {
            shared = resolve();
            log.info("Test Redis: {}", shared);
        }
        return shared;
    }

    /**
     * The Redis host.
     *
     * @return a host name or IP address
     */
    public String host() {
        return host;
    }

    /**
     * The Redis TCP port.
     *
     * @return the port number
     */
    public int port() {
        return port;
    }

    /**
     * The address for Redis clients such as Lettuce: the configured URL as-is, or {@code redis://host:port}.
     *
     * @return the Redis URI
     */
    public String uri() {
        return uri;
    }

    /**
     * Sends one command over a new plain socket (minimal RESP2 client, 5 second connect and read timeout) and renders
     * the reply as text: simple and bulk strings as-is, integers in decimal, arrays as their elements joined with
     * {@code '\n'} (nested arrays flattened, nested null elements as {@code (nil)}).
     *
     * <p>The client does not authenticate and ignores any password or database in the URL.
     *
     * @param args command name and arguments, e.g. {@code "GET", "k"}
     * @return the reply rendered as text, or {@code null} for a null reply
     * @throws IllegalStateException             if Redis replies with an error
     * @throws java.io.UncheckedIOException if the connection fails or times out
     */
    public String command(String... args) {
        return Resp.command(host, port, Resp.DEFAULT_TIMEOUT, args);
    }

    /**
     * Deletes every key of every database ({@code FLUSHALL}) and every cached Lua script ({@code SCRIPT FLUSH}).
     */
    public void flushAll() {
        command("FLUSHALL");
        command("SCRIPT", "FLUSH");
    }

    /**
     * Describes where this Redis comes from.
     *
     * @return the URI and its source (URL setting, Testcontainers, or redis-server on PATH)
     */
    @Override
    public String toString() {
        return uri + " (" + source + ")";
    }

    // ---------------------------------------------------------------------------------------------------------------

    private static TestRedis resolve() {
        String property = System.getProperty(URL_PROPERTY);
        if (property != null && !property.isBlank()) {
            return fromUrl(property.trim(), "system property " + URL_PROPERTY);
        }
        String env = System.getenv(URL_ENV);
        if (env != null && !env.isBlank()) {
            return fromUrl(env.trim(), "environment variable " + URL_ENV);
        }
        List<Throwable> failures = new ArrayList<>();
        if (dockerAvailable()) {
            try {
                return fromContainer();
            } catch (Throwable e) {
                log.warn("Docker is available but the {} container did not start; trying redis-server on PATH", IMAGE,
                        e);
                failures.add(e);
            }
        }
        try {
            RedisServer server = RedisServer.start();
            return new TestRedis(server.host(), server.port(), server.uri(), "redis-server on PATH, " + server);
        } catch (RuntimeException e) {
            failures.add(e);
        }
        IllegalStateException failure = new IllegalStateException("No Redis for tests. Provide one of: "
                + "the environment variable " + URL_ENV + "=redis://host:port (or -D" + URL_PROPERTY + "=...), "
                + "a running Docker engine (Testcontainers starts " + IMAGE + "), "
                + "or the redis-server binary on the PATH (Debian: apt-get install redis-server).");
        failures.forEach(failure::addSuppressed);
        throw failure;
    }

    /** Uses an external Redis given as {@code redis://host[:port]} (default port 6379); checks it answers PING. */
    static TestRedis fromUrl(String url, String source) {
        URI parsed;
        try {
            parsed = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(source + " is not a redis://host:port URL: " + url, e);
        }
        if (!"redis".equalsIgnoreCase(parsed.getScheme()) || parsed.getHost() == null) {
            throw new IllegalStateException(source + " is not a redis://host:port URL: " + url);
        }
        int port = parsed.getPort() < 0 ? 6379 : parsed.getPort();
        TestRedis redis = new TestRedis(parsed.getHost(), port, url, source);
        if (!Resp.ping(redis.host, port, Duration.ofSeconds(2))) {
            throw new IllegalStateException("Redis from " + source + " (" + url + ") does not answer PING");
        }
        return redis;
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable e) { // Testcontainers missing from the class path, or broken Docker configuration
            log.debug("Testcontainers cannot use Docker", e);
            return false;
        }
    }

    @SuppressWarnings("resource") // stopped by Testcontainers' Ryuk when the JVM exits
    private static TestRedis fromContainer() {
        RedisContainer container = new RedisContainer(DockerImageName.parse(IMAGE));
        container.start();
        String host = container.getRedisHost();
        int port = container.getRedisPort();
        return new TestRedis(host, port, "redis://" + host + ":" + port,
                "Testcontainers " + IMAGE + ", container " + container.getContainerId());
    }
}
