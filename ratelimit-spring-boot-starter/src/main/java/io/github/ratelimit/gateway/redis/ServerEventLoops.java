package io.github.ratelimit.gateway.redis;

import java.util.List;

import io.netty.channel.EventLoop;

/**
 * The event loops a Netty-based server handles its requests on (the WebFlux server's), on which the limiter keeps a
 * Redis connection each ({@link LettuceScriptExecutor}).
 */
@FunctionalInterface
public interface ServerEventLoops {

	/**
	 * The server's loops now: asked again after the application context is stopped and started (a server may then run
	 * on new loops).
	 * @return the loops; empty when the server's are not known
	 */
	List<EventLoop> eventLoops();

}
