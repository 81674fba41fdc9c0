package io.github.ratelimit.sample.mvc;

import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.thread.Threading;
import org.springframework.context.event.EventListener;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.stereotype.Component;

/**
 * Once the application is ready, sends one {@code PING} to Redis (off the start-up and request threads) and logs a
 * clear warning when Redis does not answer, saying what the limiter does until Redis is back. It pings through the
 * application's connection factory, which reaches the same Redis as the limiter's own Lettuce client (a copy of it,
 * whose script connection opens by itself in the background at start-up). The Server MVC sample's counterpart of the
 * WebFlux sample's check, with the same messages; the wait is a plain blocking call on a thread of its own (a
 * virtual thread when {@code spring.threads.virtual.enabled} is in effect).
 */
@Component
class RedisStartupCheck {

	private static final Logger logger = LoggerFactory.getLogger(RedisStartupCheck.class);

	private final ObjectProvider<RedisConnectionFactory> connectionFactory;

	private final ObjectProvider<RateLimitProperties> properties;

	private final Environment environment;

	RedisStartupCheck(ObjectProvider<RedisConnectionFactory> connectionFactory,
			ObjectProvider<RateLimitProperties> properties, Environment environment) {
		this.connectionFactory = connectionFactory;
		this.properties = properties;
		this.environment = environment;
	}

	@EventListener(ApplicationReadyEvent.class)
	void applicationReady() {
		check();
	}

	/**
	 * Ping Redis once and log the outcome, on a thread of its own: opening Lettuce's shared connection blocks while
	 * it connects (bounded by {@code spring.data.redis.connect-timeout}), the {@code PING} itself by
	 * {@code spring.data.redis.timeout}.
	 * @return whether Redis answered; never completes exceptionally
	 */
	CompletableFuture<Boolean> check() {
		RedisConnectionFactory factory = this.connectionFactory.getIfAvailable();
		if (factory == null) {
			logger.warn("No Redis connection factory: the RateLimit filter is not active");
			return CompletableFuture.completedFuture(false);
		}
		String address = address(factory);
		return CompletableFuture.supplyAsync(() -> ping(factory), executor()).thenApply((failure) -> {
			if (failure.isEmpty()) {
				logger.info("Redis at {} answered PING: requests are limited across every gateway instance using it",
						address);
				return true;
			}
			logger.warn("Redis at {} is not reachable: {} ({})", address, consequence(), failure.get());
			return false;
		});
	}

	/** What the limiter does while Redis is unavailable, from the fallback setting and the critical groups. */
	String consequence() {
		String mode = this.environment.getProperty("ratelimit.fallback.mode", "local");
		String critical = criticalGroups();
		if (mode.equalsIgnoreCase("allow")) {
			return "requests pass unlimited until it is"
					+ (critical.isEmpty() ? "" : ", except on critical groups " + critical + ", which answer 503");
		}
		return "until it is, each instance limits requests on its own share of every limit"
				+ (critical.isEmpty() ? "" : ", and critical groups " + critical + " answer 503");
	}

	private String criticalGroups() {
		RateLimitProperties settings = this.properties.getIfAvailable();
		if (settings == null) {
			return "";
		}
		TreeSet<String> names = new TreeSet<>();
		for (Map.Entry<String, RateLimitProperties.Group> group : settings.getGroups().entrySet()) {
			if (group.getValue().isCritical()) {
				names.add(group.getKey());
			}
		}
		return names.isEmpty() ? "" : String.join(", ", names);
	}

	/** One thread per check, virtual where Spring Boot runs on virtual threads (Java 21+). */
	private SimpleAsyncTaskExecutor executor() {
		SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("redis-startup-check-");
		executor.setDaemon(true);
		executor.setVirtualThreads(Threading.VIRTUAL.isActive(this.environment));
		return executor;
	}

	/** Blocking: the reason Redis did not answer, or empty when it did. Never throws. */
	private static Optional<String> ping(RedisConnectionFactory factory) {
		try (RedisConnection connection = factory.getConnection()) {
			connection.ping();
			return Optional.empty();
		}
		catch (RuntimeException ex) {
			return Optional.of(reason(ex));
		}
	}

	private String address(RedisConnectionFactory factory) {
		if (factory instanceof LettuceConnectionFactory lettuce && !lettuce.isClusterAware()) {
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return this.environment.getProperty("spring.data.redis.host", "localhost") + ":"
				+ this.environment.getProperty("spring.data.redis.port", "6379");
	}

	private static String reason(Throwable ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause.getMessage() != null) ? cause.getMessage() : cause.toString();
	}

}
