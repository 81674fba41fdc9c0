package io.github.ratelimit.sample.mvc;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.sample.support.AbstractRedisStartupCheck;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.thread.Threading;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.stereotype.Component;

/**
 * The Server MVC sample's Redis start-up check: a plain blocking {@code PING} on a thread of its own (a virtual
 * thread when {@code spring.threads.virtual.enabled} is in effect).
 */
@Component
class RedisStartupCheck extends AbstractRedisStartupCheck<RedisConnectionFactory> {

	private final Environment environment;

	RedisStartupCheck(ObjectProvider<RedisConnectionFactory> connectionFactory,
			ObjectProvider<RateLimitProperties> properties, Environment environment) {
		super(connectionFactory, properties, environment);
		this.environment = environment;
	}

	/**
	 * Ping on a thread of its own: opening Lettuce's shared connection blocks while it connects (bounded by
	 * {@code spring.data.redis.connect-timeout}), the {@code PING} itself by {@code spring.data.redis.timeout}.
	 */
	@Override
	protected CompletableFuture<Optional<String>> ping(RedisConnectionFactory factory) {
		return CompletableFuture.supplyAsync(() -> blockingPing(factory), executor());
	}

	/** One thread per check, virtual where Spring Boot runs on virtual threads (Java 21+). */
	private SimpleAsyncTaskExecutor executor() {
		SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("redis-startup-check-");
		executor.setDaemon(true);
		executor.setVirtualThreads(Threading.VIRTUAL.isActive(this.environment));
		return executor;
	}

	/** Blocking: the reason Redis did not answer, or empty when it did. Never throws. */
	private static Optional<String> blockingPing(RedisConnectionFactory factory) {
		try (RedisConnection connection = factory.getConnection()) {
			connection.ping();
			return Optional.empty();
		}
		catch (RuntimeException ex) {
			return Optional.of(reason(ex));
		}
	}

}
