package io.github.ratelimit.gateway.autoconfigure;

import io.github.ratelimit.gateway.plan.PrincipalPlanResolver;
import io.github.ratelimit.gateway.plan.SecurityPrincipalPlanResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Auto-configuration of the plans of authenticated principals ({@code key-by: principal}) with Spring Security:
 * a {@link SecurityPrincipalPlanResolver} reading {@code ratelimit.principal.plan-claim} and
 * {@code ratelimit.principal.plan-authority-prefix}. Active only when Spring Security ({@code spring-security-core})
 * is on the class path; runs before {@link RateLimitAutoConfiguration}, whose default (principals name no plan) then
 * backs off. An application's own {@link PrincipalPlanResolver} bean replaces it (anonymous authentication stays no
 * client: the client key resolver refuses it whatever the resolver).
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.security.core.Authentication",
		value = ReactiveStringRedisTemplate.class)
@EnableConfigurationProperties(RateLimitProperties.class)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
public final class RateLimitSecurityAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	PrincipalPlanResolver rateLimitPrincipalPlanResolver(RateLimitProperties properties) {
		RateLimitProperties.Principal principal = properties.getPrincipal();
		return new SecurityPrincipalPlanResolver(principal.getPlanClaim(), principal.getPlanAuthorityPrefix());
	}

}
