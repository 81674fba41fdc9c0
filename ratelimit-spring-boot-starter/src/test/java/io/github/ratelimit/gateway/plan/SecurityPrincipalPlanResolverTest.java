package io.github.ratelimit.gateway.plan;

import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.oauth2.core.DefaultOAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.core.OAuth2AccessToken;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.BearerTokenAuthentication;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SecurityPrincipalPlanResolver}: the plan from a claim, else from an authority with the prefix; anonymous
 * and unauthenticated authentications are no clients.
 */
class SecurityPrincipalPlanResolverTest {

	private final SecurityPrincipalPlanResolver resolver = new SecurityPrincipalPlanResolver("plan", "PLAN_");

	@Test
	void theClaimOfAJwtNamesThePlan() {
		assertThat(this.resolver.planOf(jwt(Map.of("plan", "pro")))).isEqualTo("pro");
		assertThat(this.resolver.planOf(jwt(Map.of("plan", " pro ")))).isEqualTo("pro");
		assertThat(this.resolver.resolvePlan(jwt(Map.of("plan", "pro"))).toCompletableFuture().join()).contains("pro");
	}

	@Test
	void claimsThatAreNoNonBlankStringNameNoPlan() {
		assertThat(this.resolver.planOf(jwt(Map.of("plan", List.of("pro"))))).isNull();
		assertThat(this.resolver.planOf(jwt(Map.of("plan", 3)))).isNull();
		assertThat(this.resolver.planOf(jwt(Map.of("plan", " ")))).isNull();
		assertThat(this.resolver.planOf(jwt(Map.of("tier", "pro")))).isNull();
	}

	@Test
	void theFirstAuthorityWithThePrefixNamesThePlanAndTheClaimWins() {
		assertThat(this.resolver.planOf(jwt(Map.of(), "SCOPE_read", "PLAN_pro", "PLAN_free"))).isEqualTo("pro");
		assertThat(this.resolver.planOf(jwt(Map.of("plan", "free"), "PLAN_pro"))).isEqualTo("free");
		// the prefix alone names nothing
		assertThat(this.resolver.planOf(jwt(Map.of(), "PLAN_"))).isNull();
		assertThat(this.resolver.planOf(UsernamePasswordAuthenticationToken.authenticated("alice", "n/a",
				AuthorityUtils.createAuthorityList("PLAN_pro")))).isEqualTo("pro");
	}

	@Test
	void theAttributesOfAnIntrospectedTokenNameThePlan() {
		DefaultOAuth2AuthenticatedPrincipal principal = new DefaultOAuth2AuthenticatedPrincipal("client-7",
				Map.of("plan", "pro"), AuthorityUtils.NO_AUTHORITIES);
		OAuth2AccessToken token = new OAuth2AccessToken(OAuth2AccessToken.TokenType.BEARER, "opaque", Instant.now(),
				Instant.now().plusSeconds(60));
		assertThat(this.resolver.planOf(new BearerTokenAuthentication(principal, token, AuthorityUtils.NO_AUTHORITIES)))
			.isEqualTo("pro");
	}

	@Test
	void emptySettingsReadNothing() {
		SecurityPrincipalPlanResolver off = new SecurityPrincipalPlanResolver("", " ");
		assertThat(off.planOf(jwt(Map.of("plan", "pro"), "PLAN_pro"))).isNull();
	}

	@Test
	void anonymousAndUnauthenticatedAuthenticationsAreNoClients() {
		assertThat(this.resolver.isAuthenticated(jwt(Map.of()))).isTrue();
		assertThat(this.resolver.isAuthenticated(new AnonymousAuthenticationToken("key", "anonymousUser",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")))).isFalse();
		assertThat(this.resolver
			.isAuthenticated(UsernamePasswordAuthenticationToken.unauthenticated("alice", "secret"))).isFalse();
		Principal plain = () -> "alice";
		assertThat(this.resolver.isAuthenticated(plain)).isTrue();
		assertThat(this.resolver.planOf(plain)).isNull();
		assertThat(this.resolver.isAuthenticated(() -> " ")).isFalse();
	}

	private static JwtAuthenticationToken jwt(Map<String, Object> claims, String... authorities) {
		Jwt.Builder jwt = Jwt.withTokenValue("token").header("alg", "RS256").subject("alice");
		claims.forEach(jwt::claim);
		return new JwtAuthenticationToken(jwt.build(), AuthorityUtils.createAuthorityList(authorities));
	}

}
