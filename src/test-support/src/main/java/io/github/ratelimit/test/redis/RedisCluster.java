package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A real Redis Cluster on {@code 127.0.0.1} for tests: {@code masters} masters, each with {@code replicasPerMaster}
 * replicas, every node a {@code redis-server} process started from the {@code PATH} on free ports (client port and
 * cluster bus port), without persistence, in its own temporary directory. The cluster is formed with
 * {@code redis-cli --cluster create} and {@link #start(int, int) start} returns only once EVERY node reports
 * {@code cluster_state:ok}, knows every other node and covers all 16384 slots, and every replica's link to its
 * master is up (one node saying ok is not enough: the others may still answer CLUSTERDOWN).
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start(3, 1)) {
 *     registry.add("spring.data.redis.cluster.nodes", cluster::nodeAddresses);
 *     RedisCluster.Node owner = cluster.masterOf("rl:{search|k:abc}:0");
 *     cluster.kill(owner);
 *     RedisCluster.Node promoted = cluster.awaitFailover(owner);
 * }
 * }</pre>
 *
 * <p>Typically ready in about 2 seconds (3 masters) or 3 seconds (3 masters, 3 replicas). Every wait is a bounded
 * polling loop; nodes left running are killed by a JVM shutdown hook. Requires a POSIX system with
 * {@code redis-server}, {@code redis-cli} (Redis 7: {@code cluster-port}) and {@code kill} on the {@code PATH}.
 * Instances are thread-safe.
 */
public final class RedisCluster implements AutoCloseable {

    /** Number of hash slots of every Redis Cluster. */
    public static final int SLOTS = 16384;
    /** Node timeout used by {@link #start(int, int)}: the value of STACK.md; failover takes a little longer. */
    public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(5);

    private static final String HOST = RedisProcess.HOST;
    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(60);
    /**
     * Longest wait for a node's reply to one command sent by the test support. Generous: under {@code stress-ng} a
     * node can go unscheduled for seconds, and a {@code FLUSHALL} between tests had no reply within 5 s once.
     */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(15);

    private static final Set<RedisCluster> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(RedisCluster::destroyQuietly),
                "redis-cluster-reaper"));
    }

    private final int masters;
    private final int replicasPerMaster;
    private final Duration nodeTimeout;
    private final boolean requireFullCoverage;
    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();

    private RedisCluster(int masters, int replicasPerMaster, Duration nodeTimeout, boolean requireFullCoverage,
            Path dir) {
        this.masters = masters;
        this.replicasPerMaster = replicasPerMaster;
        this.nodeTimeout = nodeTimeout;
        this.requireFullCoverage = requireFullCoverage;
        this.dir = dir;
    }

    /**
     * Starts a cluster of three masters without replicas, node timeout {@link #DEFAULT_NODE_TIMEOUT}.
     *
     * @return the running cluster; {@link #close() close} it when done
     */
    public static RedisCluster start() {
        return start(3, 0);
    }

    /**
     * Starts a cluster with the {@link #DEFAULT_NODE_TIMEOUT default node timeout}.
     *
     * @param masters           number of masters, at least 3 (Redis refuses fewer)
     * @param replicasPerMaster replicas of each master, 0 or more
     * @return the running cluster; {@link #close() close} it when done
     */
    public static RedisCluster start(int masters, int replicasPerMaster) {
        return start(masters, replicasPerMaster, DEFAULT_NODE_TIMEOUT);
    }

    /**
     * Starts a cluster and waits until it is fully formed (see the class description).
     *
     * @param masters           number of masters, at least 3 (Redis refuses fewer)
     * @param replicasPerMaster replicas of each master, 0 or more
     * @param nodeTimeout       {@code cluster-node-timeout}: how long a master may be unreachable before its replica
     *                          is promoted; a short one (e.g. 1 s) makes failover tests fast
     * @return the running cluster; {@link #close() close} it when done
     * @throws IllegalStateException if a node does not start or the cluster does not form in about 60 seconds (the
     *                               message holds the tail of the logs)
     */
    public static RedisCluster start(int masters, int replicasPerMaster, Duration nodeTimeout) {
        return start(masters, replicasPerMaster, nodeTimeout, true);
    }

    /**
     * Starts a cluster and waits until it is fully formed (see the class description).
     *
     * @param masters             number of masters, at least 3 (Redis refuses fewer)
     * @param replicasPerMaster   replicas of each master, 0 or more
     * @param nodeTimeout         {@code cluster-node-timeout} (see {@link #start(int, int, Duration)})
     * @param requireFullCoverage {@code cluster-require-full-coverage}: with {@code true} (Redis' default) every
     *                            node refuses commands ({@code CLUSTERDOWN}) while a slot has no running master; with
     *                            {@code false} the other masters keep serving their slots
     * @return the running cluster; {@link #close() close} it when done
     */
    public static RedisCluster start(int masters, int replicasPerMaster, Duration nodeTimeout,
            boolean requireFullCoverage) {
        if (masters < 3) {
            throw new IllegalArgumentException("a Redis Cluster needs at least 3 masters, not " + masters);
        }
        if (replicasPerMaster < 0) {
            throw new IllegalArgumentException("replicasPerMaster must be >= 0, not " + replicasPerMaster);
        }
        RedisCluster cluster;
        try {
            cluster = new RedisCluster(masters, replicasPerMaster, nodeTimeout, requireFullCoverage,
                    nodesDirectory());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for the Redis Cluster", e);
        }
        OPEN.add(cluster);
        try {
            cluster.launch();
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * A new directory for the nodes' files: in {@code /dev/shm} (memory) where it exists, else the temporary
     * directory. A node writes and fsyncs its {@code nodes.conf} on every change of the cluster's configuration, in
     * its main thread; on a disk that a build keeps busy one fsync can stall every node for seconds.
     */
    private static Path nodesDirectory() throws IOException {
        Path memory = Path.of("/dev/shm");
        if (Files.isDirectory(memory) && Files.isWritable(memory)) {
            return Files.createTempDirectory(memory, "redis-cluster-");
        }
        return Files.createTempDirectory("redis-cluster-");
    }

    /**
     * Every node started, masters and replicas, in start order (killed ones included).
     *
     * @return the nodes
     */
    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /**
     * The nodes that are masters now, as seen by a live node, in start order.
     *
     * @return the current masters (a killed master whose replica took over is no longer one)
     */
    public List<Node> masters() {
        Map<String, NodeInfo> view = clusterNodes();
        return nodes.stream()
                .filter(node -> node.isRunning() && isMaster(view.get(node.id())))
                .toList();
    }

    /**
     * The nodes that are replicas now, as seen by a live node, in start order.
     *
     * @return the current replicas
     */
    public List<Node> replicas() {
        Map<String, NodeInfo> view = clusterNodes();
        return nodes.stream()
                .filter(node -> node.isRunning() && view.containsKey(node.id())
                        && view.get(node.id()).flags().contains("slave"))
                .toList();
    }

    /**
     * The addresses of every running node, for {@code spring.data.redis.cluster.nodes}.
     *
     * @return e.g. {@code 127.0.0.1:40001,127.0.0.1:40002,127.0.0.1:40003}
     */
    public String nodeAddresses() {
        return nodes.stream().filter(Node::isRunning).map(Node::address).collect(Collectors.joining(","));
    }

    /**
     * The hash slot of a key ({@code CLUSTER KEYSLOT}, so hash tags count as Redis counts them).
     *
     * @param key the key
     * @return the slot, 0 to 16383
     */
    public int slotOf(String key) {
        return Integer.parseInt(anyRunning().command("CLUSTER", "KEYSLOT", key));
    }

    /**
     * The master that owns a key's slot now.
     *
     * @param key the key
     * @return the owner
     * @throws IllegalStateException if no running master owns it (e.g. right after a kill, before failover)
     */
    public Node masterOf(String key) {
        return masterOfSlot(slotOf(key));
    }

    /**
     * The master that owns a slot now, as seen by a live node ({@code CLUSTER NODES}).
     *
     * @param slot the slot, 0 to 16383
     * @return the owner
     * @throws IllegalStateException if no running master owns it (e.g. right after a kill, before failover)
     */
    public Node masterOfSlot(int slot) {
        Map<String, NodeInfo> view = clusterNodes();
        return ownerOf(slot, view)
                .orElseThrow(() -> new IllegalStateException("no running master owns slot " + slot + " in "
                        + view.values()));
    }

    /**
     * The replicas of a master now, as seen by a live node.
     *
     * @param master a master
     * @return its replicas (running or not), possibly none
     */
    public List<Node> replicasOf(Node master) {
        Map<String, NodeInfo> view = clusterNodes();
        return nodes.stream()
                .filter(node -> {
                    NodeInfo info = view.get(node.id());
                    return info != null && info.flags().contains("slave") && master.id().equals(info.masterId());
                })
                .toList();
    }

    /**
     * Kills a node abruptly (SIGKILL, as in a crash) and waits until its port is closed. With
     * {@code replicasPerMaster > 0} a killed master's replica is promoted after about the node timeout; see
     * {@link #awaitFailover(Node)}.
     *
     * @param node a node of this cluster
     */
    public void kill(Node node) {
        node.kill();
    }

    /**
     * Freezes a node (SIGSTOP) and waits until its process is stopped: connections stay open but nothing is answered,
     * neither clients nor the cluster bus. A master paused longer than the node timeout is marked failed by the
     * others (and, without replicas and with full coverage required, the cluster goes down); keep pauses shorter.
     * Undo with {@link #resume(Node)}.
     *
     * @param node a running node of this cluster
     */
    public void pause(Node node) {
        node.signal("STOP", true);
    }

    /**
     * Unfreezes a {@link #pause(Node) paused} node (SIGCONT) and waits until its process runs again; what waited in
     * its sockets is then answered.
     *
     * @param node a paused node of this cluster
     */
    public void resume(Node node) {
        node.signal("CONT", false);
    }

    /**
     * Starts a killed node again, on its ports and with its cluster configuration ({@code nodes.conf}), so it
     * rejoins with its id; its data is gone (no persistence). Waits until it answers and every running node reports
     * {@code cluster_state:ok}.
     *
     * @param node a {@link #kill(Node) killed} node of this cluster
     * @throws IllegalStateException if it does not rejoin within the node timeout plus 20 seconds
     */
    public void restart(Node node) {
        node.restart();
        boolean ok = RedisProcess.await(() -> nodes.stream().filter(Node::isRunning).allMatch((n) -> {
            try {
                return "ok".equals(n.info("CLUSTER", "INFO").get("cluster_state"));
            } catch (RuntimeException e) {
                return false;
            }
        }), nodeTimeout.plusSeconds(20).toMillis());
        if (!ok) {
            throw new IllegalStateException(node + " did not rejoin in time; cluster state:\n" + describe());
        }
    }

    /**
     * Waits (at most the node timeout plus 20 seconds) until every slot the given (killed) master owned belongs to
     * a running master, and every running node reports {@code cluster_state:ok} and agrees on those owners.
     *
     * @param killed a master that was {@link #kill(Node) killed}
     * @return the master that now owns the killed master's slots
     * @throws IllegalStateException if no replica took over in time
     */
    public Node awaitFailover(Node killed) {
        if (killed.isRunning()) {
            throw new IllegalArgumentException(killed + " is still running: kill it first");
        }
        AtomicReference<Node> promoted = new AtomicReference<>();
        boolean tookOver = RedisProcess.await(() -> {
            promotedFor(killed).ifPresent(promoted::set);
            return promoted.get() != null;
        }, nodeTimeout.plusSeconds(20).toMillis());
        if (!tookOver) {
            throw new IllegalStateException("no replica took over from " + killed + " in time; cluster state:\n"
                    + describe());
        }
        return promoted.get();
    }

    /**
     * Deletes every key ({@code FLUSHALL}) on every running master and every cached Lua script
     * ({@code SCRIPT FLUSH}) on every running node.
     */
    public void flushAll() {
        for (Node node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            if (isMaster(clusterNodes(node).get(node.id()))) {
                node.command("FLUSHALL");
            }
            node.command("SCRIPT", "FLUSH");
        }
    }

    /**
     * The number of keys on each running master ({@code DBSIZE}).
     *
     * @return keys by master, in start order
     */
    public Map<Node, Long> keysPerMaster() {
        Map<Node, Long> keys = new LinkedHashMap<>();
        for (Node master : masters()) {
            keys.put(master, Long.parseLong(master.command("DBSIZE")));
        }
        return keys;
    }

    /**
     * Stops every node (SIGKILL: there is nothing to persist) and deletes the cluster's directory. Idempotent.
     */
    @Override
    public synchronized void close() {
        try {
            for (Node node : nodes) {
                try {
                    node.kill();
                } catch (RuntimeException e) {
                    // keep closing the others
                }
            }
        } finally {
            OPEN.remove(this);
            RedisProcess.deleteDirectory(dir);
        }
    }

    /**
     * Describes the cluster.
     *
     * @return its shape and nodes
     */
    @Override
    public String toString() {
        return "RedisCluster[" + masters + " masters x " + replicasPerMaster + " replicas, " + nodes + "]";
    }

    // ---------------------------------------------------------------------------------------------------------------

    private void launch() {
        int count = masters * (1 + replicasPerMaster);
        for (int i = 0; i < count; i++) {
            nodes.add(Node.start(dir.resolve("node-" + i), nodeTimeout, requireFullCoverage));
        }
        List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        nodes.forEach(node -> create.add(node.address()));
        create.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
        Path output = dir.resolve("cluster-create.out");
        try {
            Process process = new ProcessBuilder(create).redirectErrorStream(true).redirectOutput(output.toFile())
                    .start();
            if (!awaitCreate(process)) {
                process.destroyForcibly();
                // redis-cli's output to a file is buffered: what the nodes see tells more
                throw new IllegalStateException("redis-cli --cluster create did not return in " + FORM_TIMEOUT
                        + ":\n" + RedisProcess.tail(output) + "\n" + describe());
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed (exit " + process.exitValue()
                        + "):\n" + RedisProcess.tail(output));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run redis-cli --cluster create (is redis-tools installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating the Redis Cluster", e);
        }
        if (!RedisProcess.await(this::formed, FORM_TIMEOUT.toMillis())) {
            throw new IllegalStateException("Redis Cluster did not form in " + FORM_TIMEOUT + ":\n" + describe()
                    + "\n" + RedisProcess.tail(output));
        }
        Map<String, NodeInfo> view = clusterNodes();
        for (Node node : nodes) {
            NodeInfo info = view.get(node.id());
            node.slotsAtStart = isMaster(info) ? info.slots() : Set.of();
        }
    }

    /**
     * Every node: state ok, knows all nodes, all slots ok, replicas' links up, and sees every replica as one (a node
     * that has just been told to replicate is a replica for itself before the others' views say so).
     */
    private boolean formed() {
        for (Node node : nodes) {
            Map<String, String> info;
            long replicasSeen;
            try {
                info = node.info("CLUSTER", "INFO");
                replicasSeen = clusterNodes(node).values().stream()
                        .filter(seen -> seen.flags().contains("slave"))
                        .count();
            } catch (RuntimeException e) {
                return false;
            }
            if (replicasSeen != (long) masters * replicasPerMaster) {
                return false;
            }
            if (!"ok".equals(info.get("cluster_state"))
                    || !Integer.toString(nodes.size()).equals(info.get("cluster_known_nodes"))
                    || !Integer.toString(SLOTS).equals(info.get("cluster_slots_ok"))) {
                return false;
            }
            Map<String, String> replication = node.info("INFO", "replication");
            if ("slave".equals(replication.get("role")) && !"up".equals(replication.get("master_link_status"))) {
                return false;
            }
        }
        return true;
    }

    private Optional<Node> promotedFor(Node killed) {
        List<Node> running = nodes.stream().filter(Node::isRunning).toList();
        Node promoted = null;
        for (Node observer : running) {
            Map<String, String> info;
            Map<String, NodeInfo> view;
            try {
                info = observer.info("CLUSTER", "INFO");
                view = clusterNodes(observer);
            } catch (RuntimeException e) {
                return Optional.empty();
            }
            if (!"ok".equals(info.get("cluster_state"))) {
                return Optional.empty();
            }
            NodeInfo old = view.get(killed.id());
            if (old != null && !old.slots().isEmpty()) {
                return Optional.empty(); // this observer still sees the dead master owning slots
            }
            Node owner = nodes.stream()
                    .filter(node -> node.isRunning() && !node.equals(killed))
                    .filter(node -> {
                        NodeInfo info2 = view.get(node.id());
                        return info2 != null && isMaster(info2) && info2.slots().containsAll(killed.slotsAtStart);
                    })
                    .findFirst().orElse(null);
            if (owner == null || (promoted != null && !promoted.equals(owner))) {
                return Optional.empty();
            }
            promoted = owner;
        }
        if (promoted != null) {
            // remember the new owner's slots, so that it too can be killed and failed over
            promoted.slotsAtStart = clusterNodes(promoted).get(promoted.id()).slots();
        }
        return Optional.ofNullable(promoted);
    }

    /**
     * Waits for {@code redis-cli --cluster create}, re-introducing nodes that do not know each other meanwhile.
     * redis-cli sends one {@code CLUSTER MEET} per node and then waits for the nodes to join by gossip; a node
     * forgets a handshake that does not complete within the node timeout, which a loaded machine can make happen
     * (a node then knew the others, which never learned of it, and redis-cli waited forever). So from 5 s on, every
     * 2 s, each node is sent a {@code CLUSTER MEET} for every node missing from its view (idempotent).
     *
     * @return whether redis-cli returned within {@link #FORM_TIMEOUT}
     */
    private boolean awaitCreate(Process process) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + FORM_TIMEOUT.toNanos();
        while (!process.waitFor(2, TimeUnit.SECONDS)) {
            long now = System.nanoTime();
            if (now - deadline > 0) {
                return false;
            }
            if (now - start > TimeUnit.SECONDS.toNanos(5)) {
                meetMissingNodes();
            }
        }
        return true;
    }

    private void meetMissingNodes() {
        for (Node node : nodes) {
            try {
                Map<String, NodeInfo> view = clusterNodes(node);
                for (Node other : nodes) {
                    NodeInfo known = view.get(other.id());
                    if (other != node && (known == null || known.flags().contains("handshake")
                            || known.flags().contains("noaddr"))) {
                        node.command("CLUSTER", "MEET", HOST, Integer.toString(other.port),
                                Integer.toString(other.busPort));
                    }
                }
            } catch (RuntimeException e) {
                // a node too busy to answer now: the next round tries again
            }
        }
    }

    private Optional<Node> ownerOf(int slot, Map<String, NodeInfo> view) {
        return nodes.stream()
                .filter(Node::isRunning)
                .filter(node -> {
                    NodeInfo info = view.get(node.id());
                    return info != null && isMaster(info) && info.slots().contains(slot);
                })
                .findFirst();
    }

    private Map<String, NodeInfo> clusterNodes() {
        return clusterNodes(anyRunning());
    }

    private static Map<String, NodeInfo> clusterNodes(Node observer) {
        Map<String, NodeInfo> view = new LinkedHashMap<>();
        for (String line : observer.command("CLUSTER", "NODES").split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            NodeInfo info = NodeInfo.parse(line);
            view.put(info.id(), info);
        }
        return view;
    }

    private static boolean isMaster(NodeInfo info) {
        return info != null && info.flags().contains("master") && !info.flags().contains("fail")
                && !info.flags().contains("fail?");
    }

    private Node anyRunning() {
        return nodes.stream().filter(Node::isRunning).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node of " + this + " is running"));
    }

    private String describe() {
        StringBuilder text = new StringBuilder();
        for (Node node : nodes) {
            text.append(node).append(": ");
            if (!node.isRunning()) {
                text.append("killed\n");
                continue;
            }
            try {
                text.append(node.info("CLUSTER", "INFO").get("cluster_state")).append('\n')
                        .append(node.command("CLUSTER", "NODES")).append('\n');
            } catch (RuntimeException e) {
                text.append(e.getMessage()).append('\n');
            }
        }
        return text.toString();
    }

    private void destroyQuietly() {
        for (Node node : nodes) {
            node.destroyQuietly();
        }
        RedisProcess.deleteDirectory(dir);
    }

    // ---------------------------------------------------------------------------------------------------------------

    /**
     * One node of the cluster: a {@code redis-server} process with its client port and cluster bus port.
     */
    public static final class Node {

        private final int port;
        private final int busPort;
        private final String id;
        private final Path dir;
        private final Duration nodeTimeout;
        private final boolean requireFullCoverage;
        private long pid;
        /** Slots owned when the cluster formed (or when it took over by failover); empty for replicas. */
        private volatile Set<Integer> slotsAtStart = Set.of();

        private Node(int port, int busPort, long pid, Path dir, Duration nodeTimeout, boolean requireFullCoverage) {
            this.port = port;
            this.busPort = busPort;
            this.pid = pid;
            this.dir = dir;
            this.nodeTimeout = nodeTimeout;
            this.requireFullCoverage = requireFullCoverage;
            this.id = command("CLUSTER", "MYID");
        }

        static Node start(Path dir, Duration nodeTimeout, boolean requireFullCoverage) {
            return RedisProcess.startOnAFreePort(() -> {
                int[] ports;
                try {
                    Files.createDirectories(dir);
                    try (Stream<Path> files = Files.list(dir)) {
                        for (Path file : files.toList()) {
                            Files.deleteIfExists(file);
                        }
                    }
                    ports = RedisProcess.freePorts(2);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot prepare a Redis Cluster node in " + dir, e);
                }
                long pid = launch(dir, ports[0], ports[1], nodeTimeout, requireFullCoverage);
                try {
                    return new Node(ports[0], ports[1], pid, dir, nodeTimeout, requireFullCoverage);
                } catch (RuntimeException e) {
                    RedisProcess.signal(pid, "KILL");
                    throw new IllegalStateException("Redis Cluster node on port " + ports[0]
                            + " does not answer CLUSTER MYID", e);
                }
            });
        }

        /**
         * The host the node listens on.
         *
         * @return always {@code 127.0.0.1}
         */
        public String host() {
            return HOST;
        }

        /**
         * The client TCP port.
         *
         * @return the port
         */
        public int port() {
            return port;
        }

        /**
         * The cluster bus port (node-to-node gossip).
         *
         * @return the port
         */
        public int busPort() {
            return busPort;
        }

        /**
         * {@code host:port}, as in {@code spring.data.redis.cluster.nodes}.
         *
         * @return the address
         */
        public String address() {
            return HOST + ":" + port;
        }

        /**
         * The node's cluster id ({@code CLUSTER MYID}).
         *
         * @return the 40-character id
         */
        public String id() {
            return id;
        }

        /**
         * Whether the node's process runs (it was not killed).
         *
         * @return whether it runs
         */
        public synchronized boolean isRunning() {
            return pid > 0;
        }

        /**
         * Sends one command to this node only (no redirection: a key of another node's slot gets {@code MOVED}).
         *
         * @param args command name and arguments
         * @return the reply rendered as text (see {@link RedisServer#command(Duration, String...)}), or {@code null}
         * @throws IllegalStateException if Redis replies with an error
         * @throws UncheckedIOException  if the connection fails or times out
         */
        public String command(String... args) {
            return Resp.command(HOST, port, COMMAND_TIMEOUT, args);
        }

        /**
         * One {@code INFO} section, e.g. {@code info("INFO", "memory")}, or {@code info("CLUSTER", "INFO")}, as a map
         * of its {@code name:value} lines.
         *
         * @param command the command and its argument
         * @return the fields
         */
        public Map<String, String> info(String... command) {
            Map<String, String> fields = new LinkedHashMap<>();
            for (String line : command(command).split("\r?\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && !line.startsWith("#")) {
                    fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
                }
            }
            return fields;
        }

        synchronized void kill() {
            if (pid < 0) {
                return;
            }
            RedisProcess.kill(pid, port);
            pid = -1;
        }

        synchronized void restart() {
            if (pid > 0) {
                throw new IllegalStateException(this + " is running: kill it first");
            }
            pid = launch(dir, port, busPort, nodeTimeout, requireFullCoverage);
        }

        /** Sends STOP or CONT and waits (Linux: {@code /proc}) until the process is stopped or runs again. */
        synchronized void signal(String name, boolean stopped) {
            if (pid < 0) {
                throw new IllegalStateException(this + " is not running");
            }
            RedisProcess.signal(pid, name);
            Path stat = Path.of("/proc", Long.toString(pid), "stat");
            if (!Files.isReadable(stat)) {
                return;
            }
            boolean reached = RedisProcess.await(() -> {
                String text = RedisProcess.readLines(stat).stream().findFirst().orElse("");
                int end = text.lastIndexOf(')'); // the command name in parentheses may contain spaces
                return (end > 0 && text.length() > end + 2 && text.charAt(end + 2) == 'T') == stopped;
            }, RedisProcess.WAIT_MILLIS);
            if (!reached) {
                throw new IllegalStateException(this + " did not " + (stopped ? "stop" : "continue") + " in time");
            }
        }

        synchronized void destroyQuietly() {
            if (pid > 0) {
                try {
                    RedisProcess.signal(pid, "CONT");
                    RedisProcess.signal(pid, "KILL");
                } catch (RuntimeException ignored) {
                    // best effort at JVM exit
                }
                pid = -1;
            }
        }

        /**
         * Describes this node.
         *
         * @return its address and pid (or "killed")
         */
        @Override
        public synchronized String toString() {
            return "Node[" + address() + (pid < 0 ? ", killed" : ", pid " + pid) + "]";
        }

        private static long launch(Path dir, int port, int busPort, Duration nodeTimeout,
                boolean requireFullCoverage) {
            return RedisProcess.launch(dir, port, List.of(
                    "--cluster-enabled", "yes", "--cluster-port", Integer.toString(busPort),
                    "--cluster-require-full-coverage", requireFullCoverage ? "yes" : "no",
                    "--cluster-config-file", dir.resolve("nodes.conf").toString(),
                    "--cluster-node-timeout", Long.toString(nodeTimeout.toMillis()),
                    // a replica is promoted however long it was disconnected: tests kill masters at will
                    "--cluster-replica-validity-factor", "0",
                    // replicas sync at once (the default waits 5 s for more replicas to join a diskless sync)
                    "--repl-diskless-sync-delay", "0"));
        }
    }

    /** One line of {@code CLUSTER NODES}. */
    private record NodeInfo(String id, Set<String> flags, String masterId, Set<Integer> slots) {

        static NodeInfo parse(String line) {
            String[] fields = line.trim().split(" ");
            Set<Integer> slots = new java.util.HashSet<>();
            for (int i = 8; i < fields.length; i++) {
                String range = fields[i];
                if (range.startsWith("[")) {
                    continue; // a slot being migrated or imported
                }
                int dash = range.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                for (int slot = from; slot <= to; slot++) {
                    slots.add(slot);
                }
            }
            return new NodeInfo(fields[0], Set.of(fields[2].split(",")), fields[3], slots);
        }
    }
}
