package io.github.ratelimit.gateway.route;

import java.util.function.BooleanSupplier;

import io.github.ratelimit.gateway.chain.HeldSlots;
import org.jspecify.annotations.Nullable;

/**
 * The concurrency slots a route's filter took for the latest attempt of a request, kept in a request attribute: a
 * {@code Retry} filter in front of the {@code RateLimit} filter runs it once per attempt, and an attempt's slots end
 * when the next one starts, so that a retry does not count against itself.
 */
public final class AttemptSlots {

	private static final String ATTRIBUTE = AttemptSlots.class.getName() + ".";

	private AttemptSlots() {
	}

	/**
	 * Remember the slots an attempt took.
	 * @param attributes the request's attributes
	 * @param route the route's settings
	 * @param slots the slots, not {@link HeldSlots#NONE}
	 */
	public static void remember(Attributes attributes, RouteLimitSettings route, HeldSlots slots) {
		attributes.put(attribute(route), slots);
	}

	/**
	 * End the slots the previous attempt of a request took in a route's limits, if it took any: kept until they
	 * expire when that attempt was sent upstream and not answered (the upstream may still be working on it, so the
	 * retry needs a slot of its own), given back otherwise.
	 * @param attributes the request's attributes
	 * @param route the route's settings
	 * @param sentAndUnanswered whether the previous attempt was sent upstream and not answered; asked only when
	 * that attempt took slots
	 */
	public static void endPrevious(Attributes attributes, RouteLimitSettings route, BooleanSupplier sentAndUnanswered) {
		if (!(attributes.remove(attribute(route)) instanceof HeldSlots previous)) {
			return;
		}
		if (sentAndUnanswered.getAsBoolean()) {
			previous.keep();
		}
		else {
			previous.release();
		}
	}

	private static String attribute(RouteLimitSettings route) {
		return ATTRIBUTE + route.routeId() + '|' + route.group();
	}

	/** A request's attributes, as a front end holds them. */
	public interface Attributes {

		/**
		 * Remove an attribute.
		 * @param name the attribute's name
		 * @return its value, or {@code null} when it had none
		 */
		@Nullable Object remove(String name);

		/**
		 * Set an attribute.
		 * @param name the attribute's name
		 * @param value its value
		 */
		void put(String name, Object value);

	}

}
