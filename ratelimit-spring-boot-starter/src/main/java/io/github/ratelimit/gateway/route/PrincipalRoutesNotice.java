package io.github.ratelimit.gateway.route;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.util.ClassUtils;

/**
 * Says at INFO, once per route, when a {@code key-by: principal} route cannot do all it is configured for: without
 * Spring Security on the class path no plan comes from credentials (every principal gets
 * {@code ratelimit.principal.default-plan}, and only a principal set by other means is limited by name), and without
 * {@code spring-security-oauth2-core} the default plan resolver reads no token claims, only granted authorities.
 * Bounded by the routes.
 */
final class PrincipalRoutesNotice {

	private static final Logger logger = LoggerFactory.getLogger(PrincipalRoutesNotice.class);

	private final @Nullable String limitation;

	private final Set<String> noticedRoutes = ConcurrentHashMap.newKeySet();

	/**
	 * Create a notice for the classes a class loader sees.
	 * @param classLoader the application's class loader
	 */
	PrincipalRoutesNotice(@Nullable ClassLoader classLoader) {
		this.limitation = limitation(classLoader);
	}

	/**
	 * What {@code key-by: principal} routes cannot do with the classes a class loader sees.
	 * @param classLoader the class loader
	 * @return the limitation, for a log line, or {@code null} when Spring Security and its OAuth2 core are present
	 */
	static @Nullable String limitation(@Nullable ClassLoader classLoader) {
		if (!ClassUtils.isPresent("org.springframework.security.core.Authentication", classLoader)) {
			return "Spring Security is not on the class path: no plan is read from credentials (every principal gets "
					+ "ratelimit.principal.default-plan unless a PrincipalPlanResolver bean names one), and without a "
					+ "principal set by other means requests are limited by IP address";
		}
		if (!ClassUtils.isPresent("org.springframework.security.oauth2.core.ClaimAccessor", classLoader)) {
			return "spring-security-oauth2-core is not on the class path: the default PrincipalPlanResolver reads no "
					+ "token claim (ratelimit.principal.plan-claim), only granted authorities "
					+ "(ratelimit.principal.plan-authority-prefix)";
		}
		return null;
	}

	/**
	 * Log the limitation, if any, the first time a route is seen keyed by principal.
	 * @param routeId the route's id
	 */
	void keyedByPrincipal(String routeId) {
		if (this.limitation != null && this.noticedRoutes.add(routeId)) {
			logger.info("Route '{}' has key-by: principal, but {}", routeId, this.limitation);
		}
	}

}
