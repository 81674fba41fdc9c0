package io.github.ratelimit.gateway.chain;

import io.github.ratelimit.gateway.redis.BucketKeys;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.ratelimit.gateway.redis.SpringDataScriptExecutor;
import io.github.ratelimit.gateway.redis.StartedConnectionFactory;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis store (key prefix {@code rl}) on the shared test Redis, for the chain's tests against a real Redis:
 * connected before the class's tests, flushed before each, disconnected after them. Register it as a static
 * {@code @RegisterExtension} field.
 */
final class RedisStoreOnTestRedis implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

	private final TestRedis redis = TestRedis.shared();

	private LettuceConnectionFactory connectionFactory;

	private RedisRateLimitStore store;

	/**
	 * The store, from the class's first test on.
	 * @return the store
	 */
	RedisRateLimitStore store() {
		return this.store;
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		this.connectionFactory = StartedConnectionFactory.to(this.redis.host(), this.redis.port());
		this.store = new RedisRateLimitStore(new SpringDataScriptExecutor(this.connectionFactory), new BucketKeys("rl"));
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.redis.flushAll();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		if (this.connectionFactory != null) {
			this.connectionFactory.destroy();
		}
	}

}
