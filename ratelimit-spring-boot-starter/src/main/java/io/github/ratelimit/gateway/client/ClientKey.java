package io.github.ratelimit.gateway.client;

/**
 * Who is limited: an API key, an authenticated principal or a request header's value (each only ever held hashed),
 * or a client IP address, with the plan that applies; or, for limits with {@code scope: global},
 * {@linkplain #everyone(String) every client of an endpoint group} together.
 *
 * @param kind how the client is identified
 * @param id for {@link Kind#API_KEY}, {@link Kind#PRINCIPAL} and {@link Kind#HEADER} the hash ({@link ApiKeyHasher})
 * of the key, the principal's name or the header's name and value, never the raw value (see
 * {@link Kind#isHashed()}); for {@link Kind#IP} the canonical textual IP address; for {@link Kind#GROUP}
 * {@value #EVERYONE}
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
		GROUP("g"),

		/** By the hashed name of an authenticated principal ({@code key-by: principal}). */
		PRINCIPAL("p"),

		/** By the hashed value of a request header a route names ({@code key-by: header}). */
		HEADER("h");

		private final String tag;

		Kind(String tag) {
			this.tag = tag;
		}

		/**
		 * Short tag used in Redis key names ({@code k}, {@code ip}, {@code g}, {@code p} or {@code h}).
		 * @return the tag
		 */
		public String tag() {
			return this.tag;
		}

		/**
		 * Whether ids of this kind are hashes of a credential or an identity ({@link ApiKeyHasher}), which may be
		 * shown as they are; IP addresses and the group-wide id are not hashed. An unsalted hash hides an API key,
		 * but of a low-entropy identity (a principal's e-mail address, a tenant id) it is only a pseudonym: likely
		 * values can be hashed and compared.
		 * @return {@code true} for {@link #API_KEY}, {@link #PRINCIPAL} and {@link #HEADER}
		 */
		public boolean isHashed() {
			return this == API_KEY || this == PRINCIPAL || this == HEADER;
		}

	}

}
