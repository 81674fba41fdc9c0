package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.PlanLimits;

/**
 * Names the Redis keys of a client's buckets: {@code <prefix>:{<group>|<kind>:<id>}:<i>} where {@code i} is the
 * limit's position in its list, followed by the limit's {@linkplain Algorithm#keySuffix() algorithm suffix} for window
 * algorithms ({@code :swl}, {@code :swc}, {@code :fw}; token buckets have none), so that a limit whose algorithm
 * changes starts from fresh state instead of reading another algorithm's. A concurrency limit ({@code :cc}) has a
 * second key, its hold statistics ({@code <prefix>:{...}:<i>:cc:h}), listed after every limit's key. The part in
 * braces is a Redis Cluster hash
 * tag: every bucket of one client in one endpoint group hashes to the same slot, so one script can update them
 * atomically. The id of an API-key client is its hash, never the raw key. Braces in group names are replaced so they
 * cannot end the hash tag early.
 */
public final class BucketKeys {

	private final String prefix;

	/**
	 * Create a key namer.
	 * @param prefix prefix of every key (e.g. {@code rl})
	 */
	public BucketKeys(String prefix) {
		this.prefix = prefix;
	}

	/**
	 * The Redis keys of a client's buckets for the given limits, in the order the script takes them: one per limit,
	 * in order, then the hold statistics of each concurrency limit, in order.
	 * @param client the client
	 * @param limits the limits of the client's plan in one endpoint group
	 * @return the keys
	 */
	public List<String> keysFor(ClientKey client, PlanLimits limits) {
		String base = this.prefix + ":{" + sanitize(limits.group()) + "|" + client.kind().tag() + ":" + client.id()
				+ "}";
		List<String> suffixes = keySuffixes(limits);
		List<String> keys = new ArrayList<>(suffixes.size());
		for (String suffix : suffixes) {
			keys.add(base + suffix);
		}
		return keys;
	}

	/**
	 * What follows the hash tag in each key of {@link #keysFor}: {@code :<i>} and the algorithm suffix per limit,
	 * then {@code :<i>:cc:h} per concurrency limit.
	 * @param limits the limits of a plan in one endpoint group
	 * @return the suffixes, in the script's key order
	 */
	static List<String> keySuffixes(PlanLimits limits) {
		int count = limits.limits().size();
		List<String> suffixes = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			suffixes.add(":" + i + limits.limits().get(i).algorithm().keySuffix());
		}
		for (int i = 0; i < count; i++) {
			if (limits.limits().get(i).isConcurrency()) {
				suffixes.add(":" + i + limits.limits().get(i).algorithm().keySuffix() + ":h");
			}
		}
		return suffixes;
	}

	/**
	 * The bytes (UTF-8) every key of a client in a group starts with: {@code <prefix>:{<group>|<kind>:<id>}; each
	 * key continues with {@code }:<i>} and the algorithm suffix, as {@link #keysFor} names them.
	 * @param client the client
	 * @param limits the limits of the client's plan in one endpoint group
	 * @return the encoded start, a new array
	 */
	byte[] hashTagStart(ClientKey client, PlanLimits limits) {
		return (this.prefix + ":{" + sanitize(limits.group()) + "|" + client.kind().tag() + ":" + client.id())
			.getBytes(java.nio.charset.StandardCharsets.UTF_8);
	}

	/**
	 * The start of every key of a client in a group through the hash tag's closing brace,
	 * {@code <prefix>:{<group>|<kind>:<id>}}: it hashes to the same Redis Cluster slot as each of the keys
	 * {@link #keysFor} names (Redis hashes the part between the first <code>{</code> and the first <code>}</code>
	 * after it, which lies within this start whatever the id holds).
	 * @param client the client
	 * @param limits the limits of the client's plan in one endpoint group
	 * @return the encoded start, a new array
	 */
	byte[] slotKey(ClientKey client, PlanLimits limits) {
		return (this.prefix + ":{" + sanitize(limits.group()) + "|" + client.kind().tag() + ":" + client.id() + "}")
			.getBytes(java.nio.charset.StandardCharsets.UTF_8);
	}

	private static String sanitize(String group) {
		return group.replace('{', '(').replace('}', ')');
	}

}
