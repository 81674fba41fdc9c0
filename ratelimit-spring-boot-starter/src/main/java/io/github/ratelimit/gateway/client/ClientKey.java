package io.github.ratelimit.gateway.client;

/**
 * Who is limited: an API key (only ever held hashed) or a client IP address, with the plan that applies; or, for
 * limits with {@code scope: global}, {@linkplain #everyone(String) every client of an endpoint group} together.
 *
 * @param kind whether the client is identified by API key or by IP address
 * @param id for {@link Kind#API_KEY} the key's hash ({@link ApiKeyHasher}), never the raw key; for {@link Kind#IP}
 * the canonical textual IP address; for {@link Kind#GROUP} {@value #EVERYONE}
 * @param plan the plan name
 */
public record ClientKey(Kind kind, String id, String plan) {

	/** The id of the {@link Kind#GROUP} client: every client of an endpoint group. */
	public static final String EVERYONE = "all";

	/**
	 * The client standing for every client of an endpoint group, under which limits with {@code scope: global} are
	 * kept (Redis keys {@code <prefix>:{<group>|g:all}:<i>}: one Redis Cluster slot per group, apart from any real
	 * client's slot).
	 * @param plan the plan of the request being checked (not part of any key: the bucket is shared across plans)
	 * @return the group-wide client
	 */
	public static ClientKey everyone(String plan) {
		return new ClientKey(Kind.GROUP, EVERYONE, plan);
	}

	/** How a client is identified. */
	public enum Kind {

		/** By a hashed API key. */
		API_KEY("k"),

		/** By IP address. */
		IP("ip"),

		/** Every client of an endpoint group together (limits with {@code scope: global}). */
		GROUP("g");

		private final String tag;

		Kind(String tag) {
			this.tag = tag;
		}

		/**
		 * Short tag used in Redis key names ({@code k}, {@code ip} or {@code g}).
		 * @return the tag
		 */
		public String tag() {
			return this.tag;
		}

	}

}
