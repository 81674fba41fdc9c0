package io.github.ratelimit.gateway.usage;

import java.util.List;

/**
 * Where an answer carries its usage: a path of object keys from the root object of a JSON body, such as
 * {@code usage.total_tokens} for {@code {"usage":{"total_tokens":42}}}.
 *
 * @param keys the object keys from the root, 1 to {@value #MAX_KEYS} of them, each 1 to
 * {@value #MAX_KEY_LENGTH} characters with no {@code .}
 */
public record UsageField(List<String> keys) {

	/** Most keys in a path. */
	public static final int MAX_KEYS = 16;

	/** Most characters ({@code char}s) in one key. */
	public static final int MAX_KEY_LENGTH = 128;

	/**
	 * Create a path of object keys.
	 * @throws IllegalArgumentException if there are no keys or more than {@value #MAX_KEYS}, or a key is empty,
	 * longer than {@value #MAX_KEY_LENGTH} characters or contains a {@code .}
	 */
	public UsageField {
		keys = List.copyOf(keys);
		if (keys.isEmpty()) {
			throw new IllegalArgumentException("A usage field needs at least one key");
		}
		if (keys.size() > MAX_KEYS) {
			throw new IllegalArgumentException(
					"A usage field has at most " + MAX_KEYS + " keys, '" + String.join(".", keys) + "' has "
							+ keys.size());
		}
		for (int i = 0; i < keys.size(); i++) {
			checkKey(keys, i);
		}
	}

	private static void checkKey(List<String> keys, int index) {
		String key = keys.get(index);
		String problem = null;
		if (key.isEmpty()) {
			problem = "is empty";
		}
		else if (key.length() > MAX_KEY_LENGTH) {
			problem = "is longer than " + MAX_KEY_LENGTH + " characters (" + key.length() + ")";
		}
		else if (key.indexOf('.') >= 0) {
			problem = "contains a '.'";
		}
		if (problem != null) {
			throw new IllegalArgumentException(
					"Key " + (index + 1) + " of the usage field '" + String.join(".", keys) + "' " + problem);
		}
	}

	/**
	 * Parse a path written as dot-separated keys, such as {@code usage.total_tokens}.
	 * @param dotted the keys from the root separated by {@code .}
	 * @return the path
	 * @throws IllegalArgumentException if {@code dotted} is empty, has an empty key (a leading, trailing or doubled
	 * {@code .}), a key longer than {@value #MAX_KEY_LENGTH} characters or more than {@value #MAX_KEYS} keys
	 */
	public static UsageField parse(String dotted) {
		if (dotted.isEmpty()) {
			throw new IllegalArgumentException("A usage field must not be empty");
		}
		return new UsageField(List.of(dotted.split("\\.", -1)));
	}

	/**
	 * The path in its dotted form, as {@link #parse(String)} takes it.
	 * @return the keys separated by {@code .}
	 */
	@Override
	public String toString() {
		return String.join(".", this.keys);
	}

}
