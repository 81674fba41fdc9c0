package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import javax.net.ssl.SSLSocketFactory;

/**
 * A real Redis server as managed services run it: TLS only ({@code --port 0 --tls-port P}, no plain port at all)
 * with a certificate made for the test ({@link TestCertificates}), and ACL users: the {@code default} user disabled
 * (or given a password), an administrator for the test's own commands ({@link #command(String...)}), and the users
 * the test declares with their ACL rules ({@link Builder#user}). Clients need no certificate of their own
 * ({@code --tls-auth-clients no}); they must trust {@link #certificates()}{@code .caCertificate()}.
 *
 * <p>Started from {@code redis-server} on the {@code PATH} (built with TLS, as Debian's is), a child of the test JVM on
 * {@code 127.0.0.1}, without persistence, in a temporary directory holding the certificates, the ACL file, the
 * pidfile and the log. Killed by a JVM shutdown hook if not {@link #close() closed}. Instances are thread-safe.
 */
public final class SecureRedisServer implements AutoCloseable {

    /** Name of the administrator user {@link #command(String...)} runs as (all commands, all keys). */
    public static final String ADMIN_USER = "test-admin";

    private static final Set<SecureRedisServer> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(SecureRedisServer::destroyQuietly),
                "secure-redis-server-reaper"));
    }

    private final Path dir;
    private final int port;
    private final TestCertificates certificates;
    private final SSLSocketFactory tls;
    private final String adminPassword = UUID.randomUUID().toString();
    private long pid = -1;

    private SecureRedisServer(Path dir, int port) {
        this.dir = dir;
        this.port = port;
        this.certificates = TestCertificates.create(dir);
        this.tls = certificates.socketFactory();
    }

    /**
     * A builder of a server; nothing runs until {@link Builder#start()}.
     *
     * @return a new builder: default user disabled, no users but the administrator
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Declares the ACL users and starts the server. */
    public static final class Builder {

        private final Map<String, String> users = new LinkedHashMap<>();
        private String defaultPassword;

        private Builder() {
        }

        /**
         * Adds an ACL user, enabled, with one password and the given rules.
         *
         * @param name     the user name (no spaces)
         * @param password the password (no spaces)
         * @param rules    ACL rules as in {@code ACL SETUSER}, space separated, e.g.
         *                 {@code "~rl:* resetchannels -@all +evalsha +eval"}; everything not granted is denied
         * @return this builder
         */
        public Builder user(String name, String password, String rules) {
            users.put(name, "on >" + password + " " + rules);
            return this;
        }

        /**
         * Enables the {@code default} user with a password and every permission (a {@code requirepass} server);
         * without this call the {@code default} user is disabled, so every client must name its user.
         *
         * @param password the password (no spaces)
         * @return this builder
         */
        public Builder defaultUserPassword(String password) {
            this.defaultPassword = password;
            return this;
        }

        /**
         * Makes the certificates, writes the ACL file and starts the server on a free port; returns once the
         * administrator gets {@code PONG} over TLS (typically within a second, certificates included).
         *
         * @return the running server; {@link #close() close} it when done
         * @throws IllegalStateException if {@code openssl} or {@code redis-server} fails or it does not come up
         */
        public SecureRedisServer start() {
            return RedisProcess.startInFreshDirectory("redis-tls-", OPEN, (dir, port) -> {
                SecureRedisServer server = new SecureRedisServer(dir, port);
                server.writeAclFile(users, defaultPassword);
                return server;
            }, SecureRedisServer::launch, SecureRedisServer::close);
        }
    }

    /**
     * The host the server listens on.
     *
     * @return always {@code 127.0.0.1} (named by the server certificate)
     */
    public String host() {
        return RedisProcess.HOST;
    }

    /**
     * The TLS port, the only port the server listens on.
     *
     * @return the port number
     */
    public int port() {
        return port;
    }

    /**
     * The address as a URI with TLS, without credentials.
     *
     * @return {@code rediss://127.0.0.1:PORT}
     */
    public String uri() {
        return "rediss://" + host() + ":" + port;
    }

    /**
     * The CA the server's certificate is signed by, and that certificate.
     *
     * @return the PEM files (in the server's directory)
     */
    public TestCertificates certificates() {
        return certificates;
    }

    /**
     * Runs one command as the administrator ({@value #ADMIN_USER}) over a new TLS connection, 5 s timeout.
     *
     * @param args command name and arguments, e.g. {@code "ACL", "LOG"}
     * @return the reply rendered as text, as {@link RedisServer#command(String...)} renders it
     * @throws IllegalStateException if Redis replies with an error
     * @throws UncheckedIOException  if the connection, the handshake or the read fails
     */
    public String command(String... args) {
        return Resp.command(tls, host(), port, Resp.DEFAULT_TIMEOUT, List.of(ADMIN_USER, adminPassword), args);
    }

    /**
     * Runs one command as a given user over a new TLS connection, 5 s timeout.
     *
     * @param user     the user
     * @param password its password
     * @param args     command name and arguments
     * @return the reply rendered as text
     * @throws IllegalStateException if {@code AUTH} or the command is refused (e.g. {@code WRONGPASS},
     *                               {@code NOPERM})
     * @throws UncheckedIOException  if the connection, the handshake or the read fails
     */
    public String commandAs(String user, String password, String... args) {
        return Resp.command(tls, host(), port, Resp.DEFAULT_TIMEOUT, List.of(user, password), args);
    }

    /**
     * Sends one command over a plain (not TLS) connection to the TLS port, as a client without TLS would.
     *
     * @param timeout connect and read timeout
     * @param args    command name and arguments
     * @return the reply, if the server ever answered one (it does not: it expects a TLS handshake)
     * @throws UncheckedIOException when the server closes the connection or does not answer in time
     */
    public String plainCommand(Duration timeout, String... args) {
        return Resp.command(host(), port, timeout, args);
    }

    /**
     * Deletes every key and every cached script, as the administrator.
     */
    public void flushAll() {
        command("FLUSHALL");
        command("SCRIPT", "FLUSH");
    }

    /**
     * Stops the server (SIGTERM, SIGKILL after about 10 s) and deletes its directory. Idempotent.
     */
    @Override
    public synchronized void close() {
        try {
            if (pid > 0) {
                RedisProcess.signal(pid, "TERM");
                if (!RedisProcess.await(() -> RedisProcess.portClosed(port), RedisProcess.WAIT_MILLIS)) {
                    RedisProcess.kill(pid, port);
                }
                pid = -1;
            }
        } finally {
            OPEN.remove(this);
            RedisProcess.deleteDirectory(dir);
        }
    }

    /**
     * Describes this server.
     *
     * @return the URI and the pid (or "stopped")
     */
    @Override
    public synchronized String toString() {
        return "SecureRedisServer[" + uri() + (pid < 0 ? ", stopped" : ", pid " + pid) + "]";
    }

    // ---------------------------------------------------------------------------------------------------------------

    private void writeAclFile(Map<String, String> users, String defaultPassword) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(defaultPassword == null ? "user default off resetpass -@all"
                : "user default on >" + defaultPassword + " ~* &* +@all");
        lines.add("user " + ADMIN_USER + " on >" + adminPassword + " ~* &* +@all");
        users.forEach((name, rules) -> lines.add("user " + name + " " + rules));
        Files.write(dir.resolve("users.acl"), lines, StandardCharsets.UTF_8);
    }

    private void launch() {
        List<String> listen = List.of("--port", "0", "--tls-port", Integer.toString(port));
        List<String> tlsAndAcl = List.of(
                "--tls-cert-file", certificates.serverCertificate().toString(),
                "--tls-key-file", certificates.serverKey().toString(),
                "--tls-ca-cert-file", certificates.caCertificate().toString(),
                "--tls-auth-clients", "no",
                "--aclfile", dir.resolve("users.acl").toString());
        pid = RedisProcess.launch(dir, listen, port, tlsAndAcl,
                (timeout, args) -> Resp.command(tls, host(), port, timeout, List.of(ADMIN_USER, adminPassword), args));
    }

    private void destroyQuietly() {
        try {
            synchronized (this) {
                if (pid > 0) {
                    RedisProcess.signal(pid, "KILL");
                    pid = -1;
                }
            }
        } catch (RuntimeException ignored) {
            // best effort at JVM exit
        }
        RedisProcess.deleteDirectory(dir);
    }
}
