package io.github.ratelimit.gateway.plan;

import java.security.Principal;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Finds the plan of an authenticated principal, for routes with {@code key-by: principal}, and may refuse principals
 * that are no clients (Spring Security's anonymous authentication is always refused, see
 * {@link #isAuthenticated}). With Spring Security on the class path the default is
 * {@link SecurityPrincipalPlanResolver} (a JWT claim or a granted authority names the plan); without it,
 * {@link #NAME_ONLY}. Replace it with a bean of this type to look plans up elsewhere.
 *
 * <p>The plan a resolver names is checked by the caller: a plan the limits in force do not define gives the
 * principal {@code ratelimit.principal.default-plan}, as does an empty answer or an error.
 */
@FunctionalInterface
public interface PrincipalPlanResolver {

	/**
	 * Names no plan (every principal gets {@code ratelimit.principal.default-plan}); every principal with a name
	 * counts as authenticated. The default without Spring Security.
	 */
	PrincipalPlanResolver NAME_ONLY = new PrincipalPlanResolver() {

		@Override
		public CompletionStage<Optional<String>> resolvePlan(Principal principal) {
			return Plans.UNKNOWN;
		}

		@Override
		public String toString() {
			return "PrincipalPlanResolver.NAME_ONLY";
		}

	};

	/**
	 * Resolve the plan a principal's credentials name.
	 * @param principal an authenticated principal (see {@link #isAuthenticated}) with a non-blank name
	 * @return the plan name, or empty when the credentials name none; completed at once when nothing is waited for
	 */
	CompletionStage<Optional<String>> resolvePlan(Principal principal);

	/**
	 * Whether a principal is an authenticated client, to be limited by its name; otherwise the request is limited by
	 * IP address under the anonymous plan, as if it had no principal. The default accepts every principal with a
	 * non-blank name. Spring Security's anonymous authentication and authentications not authenticated are refused
	 * by the client key resolver before this is asked, so a replacement (even a lambda) need not refuse them again.
	 * @param principal the exchange's principal
	 * @return whether it identifies a client
	 */
	default boolean isAuthenticated(Principal principal) {
		String name = principal.getName();
		return name != null && !name.isBlank();
	}

}
