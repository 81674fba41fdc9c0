package io.github.ratelimit.gateway.route;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PrincipalRoutesNotice}: the INFO line for {@code key-by: principal} routes without Spring Security, or
 * without its OAuth2 core (claims cannot be read), once per route; nothing with both present.
 */
@ExtendWith(OutputCaptureExtension.class)
class PrincipalRoutesNoticeTest {

	@Test
	void withoutOAuth2CoreTheRouteIsNamedOnceAndClaimsAreSaidUnread(CapturedOutput output) {
		PrincipalRoutesNotice notice = new PrincipalRoutesNotice(
				new FilteredClassLoader("org.springframework.security.oauth2."));
		notice.keyedByPrincipal("me");
		notice.keyedByPrincipal("me");
		notice.keyedByPrincipal("orders");
		assertThat(output.getOut()).containsOnlyOnce("Route 'me' has key-by: principal, but "
				+ "spring-security-oauth2-core is not on the class path")
			.containsOnlyOnce("Route 'orders' has key-by: principal")
			.contains("ratelimit.principal.plan-claim");
	}

	@Test
	void withoutSpringSecurityNoPlanComesFromCredentials(CapturedOutput output) {
		new PrincipalRoutesNotice(new FilteredClassLoader("org.springframework.security.")).keyedByPrincipal("me");
		assertThat(output.getOut()).containsOnlyOnce("Route 'me' has key-by: principal, but Spring Security is not "
				+ "on the class path")
			.contains("ratelimit.principal.default-plan");
	}

	@Test
	void withSpringSecurityAndItsOAuth2CoreNothingIsLogged(CapturedOutput output) {
		new PrincipalRoutesNotice(getClass().getClassLoader()).keyedByPrincipal("me");
		assertThat(PrincipalRoutesNotice.limitation(getClass().getClassLoader())).isNull();
		assertThat(output.getOut()).doesNotContain("has key-by: principal");
	}

}
