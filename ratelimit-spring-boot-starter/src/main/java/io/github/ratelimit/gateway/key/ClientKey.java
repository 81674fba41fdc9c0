package io.github.ratelimit.gateway.key;

/**
 * Who is limited: an API key (only ever held hashed) or a client IP address, with the plan that applies.
 *
 * @param kind whether the client is identified by API key or by IP address
 * @param id for {@link Kind#API_KEY} the key's hash ({@link ApiKeyHasher}), never the raw key; for {@link Kind#IP}
 * the canonical textual IP address
 * @param plan the plan name
 */
public record ClientKey(Kind kind, String id, String plan) {

	/** How a client is identified. */
	public enum Kind {

		/** By a hashed API key. */
		API_KEY("k"),

		/** By IP address. */
		IP("ip");

		private final String tag;

		Kind(String tag) {
			this.tag = tag;
		}

		/**
		 * Short tag used in Redis key names ({@code k} or {@code ip}).
		 * @return the tag
		 */
		public String tag() {
			return this.tag;
		}

	}

}
