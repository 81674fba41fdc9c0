package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.stereotype.Component;

/**
 * Once the application is ready, sends one {@code PING} to Redis (off the start-up and request threads) and logs a
 * clear warning when Redis does not answer, saying what the limiter does until Redis is back. It pings through the
 * application's connection factory, which reaches the same Redis as the limiter's own Lettuce client (a copy of it,
 * whose script connection opens by itself in the background at start-up).
 */
@Component
class RedisStartupCheck {

	/** How long the check waits for {@code PONG}. */
	static final Duration TIMEOUT = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(RedisStartupCheck.class);

	private final ObjectProvider<ReactiveRedisConnectionFactory> connectionFactory;

	private final ObjectProvider<RateLimitProperties> properties;

	private final Environment environment;

	RedisStartupCheck(ObjectProvider<ReactiveRedisConnectionFactory> connectionFactory,
			ObjectProvider<RateLimitProperties> properties, Environment environment) {
		this.connectionFactory = connectionFactory;
		this.properties = properties;
		this.environment = environment;
	}

	@EventListener(ApplicationReadyEvent.class)
	void applicationReady() {
		check().subscribe();
	}

	/**
	 * Ping Redis once and log the outcome. Runs on a bounded-elastic thread: opening Lettuce's shared connection
	 * blocks while it connects (bounded by {@code spring.data.redis.connect-timeout}); the {@code PING} itself must
	 * answer within {@link #TIMEOUT}. Connecting is not counted in that timeout, so a cold JVM opening its first
	 * connection is not mistaken for an unreachable Redis.
	 * @return whether Redis answered; never an error
	 */
	Mono<Boolean> check() {
		ReactiveRedisConnectionFactory factory = this.connectionFactory.getIfAvailable();
		if (factory == null) {
			logger.warn("No Redis connection factory: the RateLimit filter is not active");
			return Mono.just(false);
		}
		String address = address(factory);
		return Mono.fromCallable(() -> ping(factory)).subscribeOn(Schedulers.boundedElastic()).map((failure) -> {
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

	/** Blocking: the reason Redis did not answer, or empty when it did. Never throws. */
	private static Optional<String> ping(ReactiveRedisConnectionFactory factory) {
		try (ReactiveRedisConnection connection = factory.getReactiveConnection()) {
			connection.ping().block(TIMEOUT);
			return Optional.empty();
		}
		catch (RuntimeException ex) {
			return Optional.of(reason(ex));
		}
	}

	private String address(ReactiveRedisConnectionFactory factory) {
		if (factory instanceof LettuceConnectionFactory lettuce && !lettuce.isClusterAware()) {
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return this.environment.getProperty("spring.data.redis.host", "localhost") + ":"
				+ this.environment.getProperty("spring.data.redis.port", "6379");
	}

	private static String reason(Throwable ex) {
		if (ex instanceof IllegalStateException && ex.getMessage() != null && ex.getMessage().startsWith("Timeout")) {
			return "no answer to PING within " + TIMEOUT.toMillis() + " ms";
		}
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause.getMessage() != null) ? cause.getMessage() : cause.toString();
	}

}
