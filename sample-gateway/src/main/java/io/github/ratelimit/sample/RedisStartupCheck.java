package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

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
 * Once the application is ready, sends one {@code PING} to Redis (without blocking start-up or a request thread)
 * and logs a clear warning when Redis does not answer within {@link #TIMEOUT}: the limiter then lets requests
 * through until Redis is back. The shared Lettuce connection it opens also spares the first request that cost.
 */
@Component
class RedisStartupCheck {

	/** How long the check waits for {@code PONG}. */
	static final Duration TIMEOUT = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(RedisStartupCheck.class);

	private final ObjectProvider<ReactiveRedisConnectionFactory> connectionFactory;

	private final Environment environment;

	RedisStartupCheck(ObjectProvider<ReactiveRedisConnectionFactory> connectionFactory, Environment environment) {
		this.connectionFactory = connectionFactory;
		this.environment = environment;
	}

	@EventListener(ApplicationReadyEvent.class)
	void applicationReady() {
		check().subscribe();
	}

	/**
	 * Ping Redis once and log the outcome.
	 * @return whether Redis answered; never an error
	 */
	Mono<Boolean> check() {
		ReactiveRedisConnectionFactory factory = this.connectionFactory.getIfAvailable();
		if (factory == null) {
			logger.warn("No Redis connection factory: the RateLimit filter is not active");
			return Mono.just(false);
		}
		String address = address(factory);
		// Opening Lettuce's shared connection blocks while it connects: do it off the caller's thread.
		return Mono.usingWhen(Mono.fromCallable(factory::getReactiveConnection).subscribeOn(Schedulers.boundedElastic()),
				ReactiveRedisConnection::ping, ReactiveRedisConnection::closeLater)
			.timeout(TIMEOUT)
			.map((pong) -> {
				logger.info("Redis at {} answered {}: requests are limited across every gateway instance using it",
						address, pong);
				return true;
			})
			.onErrorResume((ex) -> {
				logger.warn("Redis at {} is not reachable: requests pass unlimited until it is ({})", address,
						reason(ex));
				return Mono.just(false);
			});
	}

	private String address(ReactiveRedisConnectionFactory factory) {
		if (factory instanceof LettuceConnectionFactory lettuce && !lettuce.isClusterAware()) {
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return this.environment.getProperty("spring.data.redis.host", "localhost") + ":"
				+ this.environment.getProperty("spring.data.redis.port", "6379");
	}

	private static String reason(Throwable ex) {
		if (ex instanceof TimeoutException) {
			return "no answer to PING within " + TIMEOUT.toMillis() + " ms";
		}
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause.getMessage() != null) ? cause.getMessage() : cause.toString();
	}

}
