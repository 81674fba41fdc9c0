package io.github.ratelimit.gateway.redis;

import java.util.List;

import io.netty.channel.EventLoop;

/**
 * The event loops a Netty-based server handles its requests on (the WebFlux server's), on which the limiter keeps a
 * Redis connection each ({@link LettuceScriptExecutor}).
 *
 * @param eventLoops the loops; empty when the server's are not known
 */
public record ServerEventLoops(List<EventLoop> eventLoops) {

	/**
	 * @param eventLoops the loops, copied
	 */
	public ServerEventLoops {
		eventLoops = List.copyOf(eventLoops);
	}

}
