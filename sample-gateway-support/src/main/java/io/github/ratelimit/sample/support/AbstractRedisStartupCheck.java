package io.github.ratelimit.sample.support;

import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Once the application is ready, sends one {@code PING} to Redis (off the start-up and request threads) and logs a
 * clear warning when Redis does not answer, saying what the limiter does until Redis is back. It pings through the
 * application's connection factory, which reaches the same Redis as the limiter's own Lettuce client (a copy of it,
 * whose script connection opens by itself in the background at start-up). Each sample pings its own way
 * ({@link #ping(Object)}) with the same messages.
 * @param <F> the type of the connection factory the sample pings through
 */
public abstract class AbstractRedisStartupCheck<F> {

	/** Named after the sample's subclass. */
	private final Logger logger = LoggerFactory.getLogger(getClass());

	private final ObjectProvider<F> connectionFactory;

	private final ObjectProvider<RateLimitProperties> properties;

	private final Environment environment;

	/**
	 * Create a check.
	 * @param connectionFactory the application's Redis connection factory, if there is one
	 * @param properties the starter's settings, if it is active (for the names of the critical groups)
	 * @param environment the environment (for {@code ratelimit.fallback.mode} and the Redis address)
	 */
	protected AbstractRedisStartupCheck(ObjectProvider<F> connectionFactory,
			ObjectProvider<RateLimitProperties> properties, Environment environment) {
		this.connectionFactory = connectionFactory;
		this.properties = properties;
		this.environment = environment;
	}

	/** Starts the check when the application is ready; returns at once. */
	@EventListener(ApplicationReadyEvent.class)
	public void applicationReady() {
		check();
	}

	/**
	 * Ping Redis once ({@link #ping(Object)}) and log the outcome.
	 * @return whether Redis answered; never completes exceptionally
	 */
	public CompletableFuture<Boolean> check() {
		F factory = this.connectionFactory.getIfAvailable();
		if (factory == null) {
			this.logger.warn("No Redis connection factory: the RateLimit filter is not active");
			return CompletableFuture.completedFuture(false);
		}
		String address = address(factory);
		return ping(factory).thenApply((failure) -> {
			if (failure.isEmpty()) {
				this.logger.info(
						"Redis at {} answered PING: requests are limited across every gateway instance using it",
						address);
				return true;
			}
			this.logger.warn("Redis at {} is not reachable: {} ({})", address, consequence(), failure.get());
			return false;
		});
	}

	/**
	 * Send one {@code PING} off the calling thread.
	 * @param factory the connection factory
	 * @return the reason Redis did not answer ({@link #reason(Throwable)}), or empty when it did; never completes
	 * exceptionally
	 */
	protected abstract CompletableFuture<Optional<String>> ping(F factory);

	/**
	 * What the limiter does while Redis is unavailable, from the fallback setting and the critical groups.
	 * @return e.g. {@code until it is, each instance limits requests on its own share of every limit}
	 */
	public String consequence() {
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

	private String address(F factory) {
		if (factory instanceof LettuceConnectionFactory lettuce && !lettuce.isClusterAware()) {
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return this.environment.getProperty("spring.data.redis.host", "localhost") + ":"
				+ this.environment.getProperty("spring.data.redis.port", "6379");
	}

	/**
	 * Why a call to Redis failed, for the log.
	 * @param ex what the call threw
	 * @return the message of its most specific cause (its class name when it has none)
	 */
	protected static String reason(Throwable ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause.getMessage() != null) ? cause.getMessage() : cause.toString();
	}

}
