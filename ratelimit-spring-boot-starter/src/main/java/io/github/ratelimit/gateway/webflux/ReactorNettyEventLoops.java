package io.github.ratelimit.gateway.webflux;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.redis.ServerEventLoops;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import org.jspecify.annotations.Nullable;
import reactor.netty.http.HttpResources;
import reactor.netty.resources.LoopResources;

import org.springframework.http.client.ReactorResourceFactory;

/**
 * The event loops Reactor Netty's HTTP server handles requests on: those of the {@link ReactorResourceFactory} Spring
 * Boot gives the server (loops of its own, threads named {@code webflux-http-*}, unless it is set to use Reactor
 * Netty's global {@link HttpResources}), or the global ones when there is no such factory.
 */
public final class ReactorNettyEventLoops {

	private ReactorNettyEventLoops() {
	}

	/**
	 * The server's event loops, read anew each time they are asked for (a factory with loops of its own disposes them
	 * when it stops and makes new ones when it starts).
	 * @param resourceFactory the server's resource factory; {@code null}: the server uses the global resources
	 * @return the loops
	 */
	public static ServerEventLoops of(@Nullable ReactorResourceFactory resourceFactory) {
		return () -> eventLoops(resourceFactory);
	}

	/**
	 * The server's event loops now (their group is created now when it was not yet, as the server would create it).
	 * @return the loops; empty when the factory has resources of its own that it has not created yet, or has disposed
	 */
	private static List<EventLoop> eventLoops(@Nullable ReactorResourceFactory resourceFactory) {
		LoopResources resources;
		if (resourceFactory == null || resourceFactory.isUseGlobalResources()) {
			resources = HttpResources.get();
		}
		else {
			try {
				resources = resourceFactory.getLoopResources();
			}
			catch (IllegalStateException ex) { // not initialised yet
				return List.of();
			}
		}
		EventLoopGroup group = resources.onServer(LoopResources.DEFAULT_NATIVE);
		List<EventLoop> loops = new ArrayList<>();
		for (EventExecutor executor : group) {
			if (executor instanceof EventLoop loop) {
				loops.add(loop);
			}
		}
		return loops;
	}

}
