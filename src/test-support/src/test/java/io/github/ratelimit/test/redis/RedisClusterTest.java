package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class RedisClusterTest {

    @Test
    void threeMastersCoverEverySlotAndRouteKeysToTheirOwner() {
        List<Integer> ports;
        try (RedisCluster cluster = RedisCluster.start()) {
            assertThat(cluster.nodes()).hasSize(3);
            assertThat(cluster.masters()).containsExactlyElementsOf(cluster.nodes());
            assertThat(cluster.replicas()).isEmpty();
            assertThat(cluster.nodeAddresses().split(",")).hasSize(3).allMatch(a -> a.startsWith("127.0.0.1:"));
            for (RedisCluster.Node node : cluster.nodes()) {
                assertThat(node.info("CLUSTER", "INFO")).containsEntry("cluster_state", "ok")
                        .containsEntry("cluster_slots_assigned", "16384");
            }
            // hash tags count: both keys are in the slot of "user1"
            assertThat(cluster.slotOf("rl:{user1}:0")).isEqualTo(cluster.slotOf("user1"))
                    .isEqualTo(cluster.slotOf("x{user1}y"));
            Set<RedisCluster.Node> owners = new HashSet<>();
            for (int i = 0; i < 30; i++) {
                String key = "key-" + i;
                RedisCluster.Node owner = cluster.masterOf(key);
                owners.add(owner);
                assertThat(owner.command("SET", key, "v")).isEqualTo("OK");
                for (RedisCluster.Node other : cluster.nodes()) {
                    if (!other.equals(owner)) {
                        assertThatThrownBy(() -> other.command("GET", key)).hasMessageContaining("MOVED");
                    }
                }
            }
            assertThat(owners).hasSize(3);
            assertThat(cluster.keysPerMaster().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(30);
            cluster.flushAll();
            assertThat(cluster.keysPerMaster().values()).containsOnly(0L);
            ports = cluster.nodes().stream().map(RedisCluster.Node::port).toList();
        }
        assertThat(ports).allMatch(RedisClusterTest::portClosed);
    }

    @Test
    void aReplicaTakesOverFromAKilledMaster() {
        try (RedisCluster cluster = RedisCluster.start(3, 1, Duration.ofMillis(1000))) {
            assertThat(cluster.nodes()).hasSize(6);
            assertThat(cluster.masters()).hasSize(3);
            assertThat(cluster.replicas()).hasSize(3);
            RedisCluster.Node owner = cluster.masterOf("hot");
            owner.command("SET", "hot", "1");
            // the write reaches the replica before the kill (replication is asynchronous; WAIT until 1 replica has
            // acknowledged it). Whether it survives the failover is not asserted: Redis does not promise it (an
            // acknowledged write can still be lost in a failover, per WAIT's documentation), and runs here lost it.
            assertThat(owner.command("WAIT", "1", "5000")).isEqualTo("1");
            RedisCluster.Node replica = cluster.replicasOf(owner).get(0);

            cluster.kill(owner);
            assertThat(owner.isRunning()).isFalse();
            RedisCluster.Node promoted = cluster.awaitFailover(owner);

            assertThat(promoted).isEqualTo(replica);
            // gossip settles node by node: every view agrees on the new owner within a few seconds
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
                assertThat(cluster.masterOf("hot")).isEqualTo(promoted);
                assertThat(cluster.masters()).hasSize(3).doesNotContain(owner);
                assertThat(cluster.nodeAddresses()).doesNotContain(owner.address());
            });
        }
    }

    private static boolean portClosed(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
