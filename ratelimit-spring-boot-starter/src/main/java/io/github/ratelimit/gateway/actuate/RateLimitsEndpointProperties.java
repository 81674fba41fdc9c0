package io.github.ratelimit.gateway.actuate;

import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who may look up and reset single clients through the {@code ratelimits} endpoint, bound from
 * {@code management.endpoint.ratelimits.*}, next to Boot's own {@code management.endpoint.ratelimits.access}.
 *
 * <p>A caller who may not gets one and the same {@code 403} for every lookup, decided before the group, the API key or
 * Redis is looked at: the endpoint cannot be used to test whether a guessed API key exists. The overview
 * ({@code GET /actuator/ratelimits}, API keys only counted) is not affected.
 */
@ConfigurationProperties(prefix = RateLimitsEndpointProperties.PREFIX)
public class RateLimitsEndpointProperties {

	/** Prefix of these properties. */
	public static final String PREFIX = "management.endpoint.ratelimits";

	/**
	 * Who may look up and reset one client's buckets (GET and DELETE /actuator/ratelimits/{group}): never,
	 * when-authorized (an authenticated caller holding one of the roles; without Spring Security or another source
	 * of an authenticated principal, nobody) or always (anyone who can reach the endpoint: only where the
	 * management port is reachable by operators alone).
	 */
	private Show showClients = Show.WHEN_AUTHORIZED;

	/**
	 * Roles of the callers who may look up clients when show-clients is when-authorized, as in
	 * management.endpoint.health.roles: a caller holding any of them may (with Spring Security, role OPERATOR is the
	 * authority ROLE_OPERATOR; an authority given by its full name matches too). Empty: any caller with a principal,
	 * which includes Spring Security's anonymous principal where that is switched on (ServerHttpSecurity.anonymous(),
	 * off by default): name a role then.
	 */
	private Set<String> roles = new LinkedHashSet<>();

	public Show getShowClients() {
		return this.showClients;
	}

	public void setShowClients(Show showClients) {
		this.showClients = showClients;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

	public void setRoles(Set<String> roles) {
		this.roles = roles;
	}

}
