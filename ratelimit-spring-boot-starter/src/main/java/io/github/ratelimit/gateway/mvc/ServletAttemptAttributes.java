package io.github.ratelimit.gateway.mvc;

import io.github.ratelimit.gateway.route.AttemptSlots;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * The attributes of a servlet request, where {@link AttemptSlots} keeps the slots of a request's latest attempt.
 *
 * @param request the request
 */
record ServletAttemptAttributes(HttpServletRequest request) implements AttemptSlots.Attributes {

	@Override
	public @Nullable Object remove(String name) {
		Object value = this.request.getAttribute(name);
		this.request.removeAttribute(name);
		return value;
	}

	@Override
	public void put(String name, Object value) {
		this.request.setAttribute(name, value);
	}

}
