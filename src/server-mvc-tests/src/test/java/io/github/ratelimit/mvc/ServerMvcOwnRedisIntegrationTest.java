package io.github.ratelimit.mvc;

import io.github.ratelimit.test.redis.RedisServer;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The base of the Server MVC route tests that kill, pause and restart Redis for real: the gateway's Redis is a
 * redis-server process of these tests' own ({@link #ownRedis}), not the shared test Redis (its URL wins over the host
 * and port of the base). Before each test it is restarted if a test left it killed.
 */
abstract class ServerMvcOwnRedisIntegrationTest extends ServerMvcRouteIntegrationTest {

	/**
	 * The gateway's Redis, one process for the test JVM, used by these test classes in turn; stopped by
	 * {@link RedisServer}'s shutdown hook.
	 */
	static final RedisServer ownRedis = RedisServer.start();

	@DynamicPropertySource
	static void ownRedisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", ownRedis::uri);
	}

	@BeforeEach
	void restartOwnRedisIfKilled() {
		try {
			ownRedis.command("PING");
		}
		catch (RuntimeException ex) {
			ownRedis.restart(); // a previous test left it killed
		}
	}

}
