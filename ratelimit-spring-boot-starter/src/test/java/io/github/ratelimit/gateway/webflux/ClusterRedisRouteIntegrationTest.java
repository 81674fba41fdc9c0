package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.redis.LimiterConnectionFactory;
import io.github.ratelimit.test.redis.RedisCluster;
import org.junit.jupiter.api.AfterAll;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The base of the route tests of a gateway configured the Spring Boot way for a real Redis Cluster of the test
 * class's own ({@code spring.data.redis.cluster.nodes}), instead of the shared test Redis: a subclass starts it in a
 * static field through {@link #use(RedisCluster)}; it is emptied before each test and stopped after the class, after
 * the gateway's clients. Test classes run one at a time, each with a context of its own ({@code @DirtiesContext}).
 */
@SpringBootTest(classes = ClusterGatewayTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("cluster-it")
@DirtiesContext
abstract class ClusterRedisRouteIntegrationTest extends BaseRouteIntegrationTest {

	/** The cluster of the test class that runs now. */
	private static RedisCluster cluster;

	/**
	 * Make a started cluster the gateway's Redis for the test class that runs now.
	 * @param started the cluster
	 * @return the cluster
	 */
	static RedisCluster use(RedisCluster started) {
		cluster = started;
		return started;
	}

	@DynamicPropertySource
	static void clusterProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.cluster.nodes", () -> cluster.nodeAddresses());
	}

	@AfterAll
	static void stopCluster(@Autowired LettuceConnectionFactory connectionFactory,
			@Autowired LimiterConnectionFactory limiterConnectionFactory) {
		// first the gateway's clients (the application's and the limiter's own), so they do not try to reconnect
		// to a stopped cluster
		limiterConnectionFactory.stop();
		connectionFactory.stop();
		cluster.close();
	}

	@Override
	protected void emptyBuckets() {
		cluster.flushAll();
	}

}
