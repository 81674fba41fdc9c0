package io.github.ratelimit.gateway.chain;

/**
 * Local state of an instance that holds what the shared store answered about clients (the over-limit cache's
 * denials, token leases, the local fallback's counts) and drops it when a client changes in the store
 * ({@link ClientChanges}). Both methods are called on the thread that delivers the change (for the Redis
 * subscription, a Lettuce I/O thread): they must not block, and must not throw.
 */
public interface ClientChangeListener {

	/**
	 * A client changed in the store: drop what this instance remembers of it in the change's group, so that its next
	 * request is decided by the store.
	 * @param change the client and group
	 */
	void clientChanged(ClientChange change);

	/**
	 * Changes may have been missed (the subscription to them was (re)established, or found broken): drop everything
	 * remembered that a change could have made wrong.
	 */
	void changesMissed();

}
