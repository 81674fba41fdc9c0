package io.github.ratelimit.gateway.plan;

import java.security.Principal;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.oauth2.core.ClaimAccessor;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;
import org.springframework.util.ClassUtils;

/**
 * {@link PrincipalPlanResolver} over Spring Security's {@link Authentication}: the plan is the value of a claim
 * ({@code ratelimit.principal.plan-claim}, default {@code plan}) of the principal's token or attributes, else the
 * rest of the first granted authority that starts with a prefix ({@code ratelimit.principal.plan-authority-prefix},
 * default {@code PLAN_}: authority {@code PLAN_pro} names plan {@code pro}). Anonymous authentication
 * ({@link AnonymousAuthenticationToken}) and authentications that are not authenticated are no clients: such
 * requests are limited by IP address.
 *
 * <p>Claims are read from a principal that holds claims or attributes: a resource server's {@code Jwt}
 * ({@code JwtAuthenticationToken}), an introspected opaque token's or an OAuth2/OIDC login's
 * {@link OAuth2AuthenticatedPrincipal}. A claim counts only if its value is a non-blank string. Without
 * {@code spring-security-oauth2-core} on the class path only authorities are read. The auto-configuration creates
 * this resolver only when Spring Security is on the class path. The client key resolver refuses anonymous and
 * unauthenticated authentications whatever the resolver, so replacing this one does not make them clients.
 */
public class SecurityPrincipalPlanResolver implements PrincipalPlanResolver {

	private static final boolean OAUTH2_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.oauth2.core.ClaimAccessor",
			SecurityPrincipalPlanResolver.class.getClassLoader());

	private final @Nullable String planClaim;

	private final @Nullable String authorityPrefix;

	/**
	 * Create a resolver.
	 * @param planClaim name of the claim holding the plan; {@code null} or blank to read no claim
	 * @param authorityPrefix prefix of the granted authority naming the plan (e.g. {@code PLAN_}); {@code null} or
	 * blank to read no authority
	 */
	public SecurityPrincipalPlanResolver(@Nullable String planClaim, @Nullable String authorityPrefix) {
		this.planClaim = (planClaim != null && !planClaim.isBlank()) ? planClaim.strip() : null;
		this.authorityPrefix = (authorityPrefix != null && !authorityPrefix.isBlank()) ? authorityPrefix.strip() : null;
	}

	@Override
	public CompletionStage<Optional<String>> resolvePlan(Principal principal) {
		return Plans.of(planOf(principal));
	}

	/**
	 * The plan a principal's credentials name: the claim first, then the authorities in their order.
	 * @param principal the principal
	 * @return the plan name (stripped), or {@code null} when neither names one or the principal is no
	 * {@link Authentication}
	 */
	public @Nullable String planOf(Principal principal) {
		if (!(principal instanceof Authentication authentication)) {
			return null;
		}
		if (this.planClaim != null && OAUTH2_PRESENT) {
			Object value = Claims.of(authentication.getPrincipal(), this.planClaim);
			if (value instanceof String plan && !plan.isBlank()) {
				return plan.strip();
			}
		}
		if (this.authorityPrefix != null) {
			for (GrantedAuthority authority : authentication.getAuthorities()) {
				String name = authority.getAuthority();
				if (name != null && name.length() > this.authorityPrefix.length()
						&& name.startsWith(this.authorityPrefix)) {
					return name.substring(this.authorityPrefix.length());
				}
			}
		}
		return null;
	}

	/**
	 * {@inheritDoc}
	 * <p>Also refuses Spring Security's anonymous authentication and authentications not (or no longer)
	 * authenticated.
	 */
	@Override
	public boolean isAuthenticated(Principal principal) {
		if (principal instanceof Authentication authentication
				&& (!authentication.isAuthenticated() || authentication instanceof AnonymousAuthenticationToken)) {
			return false;
		}
		return PrincipalPlanResolver.super.isAuthenticated(principal);
	}

	@Override
	public String toString() {
		return "SecurityPrincipalPlanResolver[claim=" + this.planClaim + ", authorityPrefix=" + this.authorityPrefix
				+ "]";
	}

	/** Reads claims; loaded only when spring-security-oauth2-core is on the class path. */
	private static final class Claims {

		static @Nullable Object of(@Nullable Object principal, String name) {
			if (principal instanceof ClaimAccessor claims) {
				return claims.getClaims().get(name);
			}
			if (principal instanceof OAuth2AuthenticatedPrincipal attributes) {
				return attributes.getAttributes().get(name);
			}
			return null;
		}

	}

}
