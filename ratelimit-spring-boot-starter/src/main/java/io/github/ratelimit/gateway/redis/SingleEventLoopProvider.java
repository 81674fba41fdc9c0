package io.github.ratelimit.gateway.redis;

import java.util.concurrent.TimeUnit;

import io.lettuce.core.resource.EventLoopGroupProvider;
import io.lettuce.core.resource.Transports;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;

/**
 * Gives a Lettuce client one event loop it does not own, for every channel it opens (connects, reconnects and, on a
 * Cluster, the connection to each node): the client's I/O runs on that loop's thread. Lettuce never shuts the loop
 * down: releasing it and shutting the provider down do nothing.
 */
final class SingleEventLoopProvider implements EventLoopGroupProvider {

	private final EventLoop eventLoop;

	SingleEventLoopProvider(EventLoop eventLoop) {
		this.eventLoop = eventLoop;
	}

	/**
	 * Whether Lettuce's TCP channels can be registered with an event loop (the loop's transport is the one Lettuce
	 * uses: native epoll on both sides, or NIO on both sides): registers a channel of Lettuce's class, unconnected,
	 * and closes it.
	 * @param eventLoop the loop
	 * @param timeoutMillis longest wait for the registration, milliseconds
	 * @return whether the registration succeeded within the wait
	 */
	static boolean canCarryLettuceChannels(EventLoop eventLoop, long timeoutMillis) {
		Channel channel;
		try {
			channel = Transports.socketChannelClass().getDeclaredConstructor().newInstance();
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			return false;
		}
		ChannelFuture registered = eventLoop.register(channel);
		boolean carried = registered.awaitUninterruptibly(timeoutMillis) && registered.isSuccess();
		if (channel.isRegistered()) {
			channel.close();
		}
		else {
			channel.unsafe().closeForcibly();
		}
		return carried;
	}

	/** The loop, whatever group type Lettuce asks for (it only registers channels of its transport with it). */
	@Override
	@SuppressWarnings("unchecked")
	public <T extends EventLoopGroup> T allocate(Class<T> type) {
		return (T) this.eventLoop;
	}

	@Override
	public int threadPoolSize() {
		return 1;
	}

	@Override
	public Future<Boolean> release(EventExecutorGroup eventLoopGroup, long quietPeriod, long timeout,
			TimeUnit unit) {
		return ImmediateEventExecutor.INSTANCE.newSucceededFuture(Boolean.TRUE);
	}

	@Override
	public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit timeUnit) {
		return ImmediateEventExecutor.INSTANCE.newSucceededFuture(Boolean.TRUE);
	}

}
