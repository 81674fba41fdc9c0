package io.github.ratelimit.gateway.chain;

import java.util.Objects;

import io.github.ratelimit.gateway.client.ClientKey;

/**
 * A client whose state in the shared store an operator changed in one endpoint group (a reset, a quota top-up): what
 * every instance's local state remembers of that client in that group (denials, leases, the local fallback's counts)
 * no longer holds. Names the client as the store does, by kind and id: an API key, principal or header value only by
 * its hash ({@link ClientKey#id()}), never by the raw value.
 *
 * @param group the endpoint group
 * @param kind how the client is identified (never {@link ClientKey.Kind#GROUP}: group-wide limits are never changed
 * for one client)
 * @param id the client's id as in {@link ClientKey#id()} (a hash, or a canonical IP address)
 */
public record ClientChange(String group, ClientKey.Kind kind, String id) {

	/**
	 * Check the parts.
	 * @param group the endpoint group
	 * @param kind how the client is identified
	 * @param id the client's id
	 */
	public ClientChange {
		Objects.requireNonNull(group, "group");
		Objects.requireNonNull(kind, "kind");
		Objects.requireNonNull(id, "id");
	}

	/**
	 * The change of a client in a group.
	 * @param client the client (its plan is not part of the change)
	 * @param group the endpoint group
	 * @return the change
	 */
	public static ClientChange of(ClientKey client, String group) {
		return new ClientChange(group, client.kind(), client.id());
	}

	/**
	 * Whether a client is the one changed (whatever its plan).
	 * @param client a client
	 * @return whether its kind and id are this change's
	 */
	public boolean isOf(ClientKey client) {
		return client.kind() == this.kind && client.id().equals(this.id);
	}

}
