package io.github.ratelimit.gateway.webflux;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * A gateway for the Redis Cluster tests, with nothing but the starter's auto-configuration: its plans come from the
 * Redis plan store ({@code ratelimit.plan-store.type=redis} in {@code application-cluster-it.yml}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ClusterGatewayTestApplication {

}
