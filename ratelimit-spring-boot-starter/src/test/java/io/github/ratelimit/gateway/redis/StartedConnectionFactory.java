package io.github.ratelimit.gateway.redis;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** A Lettuce connection factory to one standalone Redis, initialised and started, as tests of the store need one. */
public final class StartedConnectionFactory {

	private StartedConnectionFactory() {
	}

	/**
	 * Make, initialise and start a factory with Lettuce's defaults; the caller destroys it.
	 * @param host the Redis host
	 * @param port the Redis port
	 * @return the started factory
	 */
	public static LettuceConnectionFactory to(String host, int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
