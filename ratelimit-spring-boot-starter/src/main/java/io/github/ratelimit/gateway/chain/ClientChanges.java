package io.github.ratelimit.gateway.chain;

import java.util.concurrent.CompletableFuture;

/**
 * Carries {@linkplain ClientChange changes of clients} made through one instance (an operator's reset or top-up) to
 * the local state of every instance sharing the store. The auto-configuration's is a Redis pub/sub channel
 * ({@code io.github.ratelimit.gateway.redis.RedisClientChanges}); a bean of this type replaces it.
 *
 * <p>The limiter chain {@linkplain #listen registers} itself at build time, applies a change made through it to its
 * own state at once, and then {@linkplain #publish publishes} it for the others (and itself again, which is
 * harmless: dropping state twice is dropping it once).
 */
public interface ClientChanges {

	/** Changes stay on the instance that made them: nothing is published, no listener is ever called. */
	ClientChanges NONE = new ClientChanges() {

		@Override
		public CompletableFuture<Void> publish(ClientChange change) {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public void listen(ClientChangeListener listener) {
		}

		@Override
		public String toString() {
			return "ClientChanges.NONE";
		}

	};

	/**
	 * Publish a change to every instance, after the store confirmed it. Never blocks.
	 * @param change the client and group changed
	 * @return completed once the change was handed to every instance that listens (as far as the carrier can tell),
	 * or exceptionally when it could not be published; never waits more than about a second
	 */
	CompletableFuture<Void> publish(ClientChange change);

	/**
	 * Deliver to a listener every change published by any instance from now on, and tell it whenever changes may
	 * have been missed (see {@link ClientChangeListener#changesMissed()}).
	 * @param listener the listener
	 */
	void listen(ClientChangeListener listener);

}
