package io.github.ratelimit.gateway.protection;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * How important a request is to an upstream protection, highest first. A plan gives its clients a priority
 * ({@code ratelimit.plans.<plan>.priority}, default {@link #NORMAL}); a route may set one for every plan
 * ({@code priority} argument of the {@code RateLimit} filter).
 */
public enum Priority {

	/** Refused only when critical requests alone fill the limit (login, checkout); takes no share. */
	CRITICAL,

	/** Shed after {@link #NORMAL} and {@link #LOW} beyond their shares. */
	HIGH,

	/** The default priority of a plan. */
	NORMAL,

	/** Shed first beyond its share (bulk exports, prefetching, free plans). */
	LOW;

	/**
	 * The priority's name in configuration, meters and problem bodies.
	 * @return {@code critical}, {@code high}, {@code normal} or {@code low}
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * The priority of a configured name, in any case.
	 * @param name a name such as {@code high}
	 * @return the priority, or {@code null} when the name is none of {@code critical}, {@code high}, {@code normal},
	 * {@code low}
	 */
	public static @Nullable Priority parse(String name) {
		for (Priority priority : values()) {
			if (priority.name().equalsIgnoreCase(name.strip())) {
				return priority;
			}
		}
		return null;
	}

}
