package io.github.ratelimit.gateway.protection;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The upstream protections of this gateway instance by name, and the priority of each plan's clients.
 */
public final class UpstreamProtections {

	/** No protections; every plan {@link Priority#NORMAL}. */
	public static final UpstreamProtections NONE = new UpstreamProtections(Map.of(), (plan) -> Priority.NORMAL);

	private final Map<String, UpstreamProtection> protections;

	private final Function<String, Priority> planPriority;

	/**
	 * Create the registry.
	 * @param protections the protections by name, in the order to show them
	 * @param planPriority the priority of a plan's requests (the plans in force: it may change with a reload); must
	 * answer {@link Priority#NORMAL} for a plan without one, and never throw
	 */
	public UpstreamProtections(Map<String, UpstreamProtection> protections, Function<String, Priority> planPriority) {
		this.protections = Collections.unmodifiableMap(new LinkedHashMap<>(protections));
		this.planPriority = planPriority;
	}

	/**
	 * A protection by name.
	 * @param name its name
	 * @return the protection, or {@code null} when none has that name
	 */
	public @Nullable UpstreamProtection get(String name) {
		return this.protections.get(name);
	}

	/**
	 * Every protection.
	 * @return the protections, unmodifiable
	 */
	public Collection<UpstreamProtection> all() {
		return this.protections.values();
	}

	/**
	 * The priority of a plan's clients.
	 * @param plan a plan name
	 * @return its priority, {@link Priority#NORMAL} when it has none
	 */
	public Priority priorityOf(String plan) {
		return this.planPriority.apply(plan);
	}

	@Override
	public String toString() {
		return "UpstreamProtections" + this.protections.values();
	}

}
