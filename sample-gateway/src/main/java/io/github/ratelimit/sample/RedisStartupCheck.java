package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.sample.support.AbstractRedisStartupCheck;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.stereotype.Component;

/** The WebFlux sample's Redis start-up check: pings through the reactive connection factory. */
@Component
class RedisStartupCheck extends AbstractRedisStartupCheck<ReactiveRedisConnectionFactory> {

	/** How long the check waits for {@code PONG}. */
	static final Duration TIMEOUT = Duration.ofSeconds(1);

	RedisStartupCheck(ObjectProvider<ReactiveRedisConnectionFactory> connectionFactory,
			ObjectProvider<RateLimitProperties> properties, Environment environment) {
		super(connectionFactory, properties, environment);
	}

	/**
	 * Ping on a bounded-elastic thread: opening Lettuce's shared connection blocks while it connects (bounded by
	 * {@code spring.data.redis.connect-timeout}); the {@code PING} itself must answer within {@link #TIMEOUT}.
	 * Connecting is not counted in that timeout, so a cold JVM opening its first connection is not mistaken for an
	 * unreachable Redis.
	 */
	@Override
	protected CompletableFuture<Optional<String>> ping(ReactiveRedisConnectionFactory factory) {
		return Mono.fromCallable(() -> blockingPing(factory)).subscribeOn(Schedulers.boundedElastic()).toFuture();
	}

	/** Blocking: the reason Redis did not answer, or empty when it did. Never throws. */
	private static Optional<String> blockingPing(ReactiveRedisConnectionFactory factory) {
		try (ReactiveRedisConnection connection = factory.getReactiveConnection()) {
			connection.ping().block(TIMEOUT);
			return Optional.empty();
		}
		catch (RuntimeException ex) {
			if (ex instanceof IllegalStateException && ex.getMessage() != null
					&& ex.getMessage().startsWith("Timeout")) {
				return Optional.of("no answer to PING within " + TIMEOUT.toMillis() + " ms");
			}
			return Optional.of(reason(ex));
		}
	}

}
