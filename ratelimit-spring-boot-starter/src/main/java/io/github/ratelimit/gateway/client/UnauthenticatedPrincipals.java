package io.github.ratelimit.gateway.client;

import java.security.Principal;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.util.ClassUtils;

/**
 * Tells principals that stand in for nobody from clients, for {@code key-by: principal}, whatever
 * {@link io.github.ratelimit.gateway.plan.PrincipalPlanResolver} the application uses: with Spring Security on the
 * class path, its anonymous authentication ({@link AnonymousAuthenticationToken}, named {@code anonymousUser} by
 * default) and authentications not (or no longer) authenticated. Without Spring Security no principal is refused
 * here; Spring Security's types are loaded only when it is present.
 */
final class UnauthenticatedPrincipals {

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.authentication.AnonymousAuthenticationToken",
			UnauthenticatedPrincipals.class.getClassLoader());

	private UnauthenticatedPrincipals() {
	}

	/**
	 * Whether a principal stands in for nobody: Spring Security's anonymous authentication, or an authentication that
	 * is not authenticated.
	 * @param principal the request's principal
	 * @return whether the request is to be limited as if it had no principal
	 */
	static boolean isStandIn(Principal principal) {
		return SECURITY_PRESENT && Security.isStandIn(principal);
	}

	/** Refers to Spring Security; loaded only when it is on the class path. */
	private static final class Security {

		static boolean isStandIn(Principal principal) {
			return principal instanceof Authentication authentication
					&& (authentication instanceof AnonymousAuthenticationToken || !authentication.isAuthenticated());
		}

	}

}
