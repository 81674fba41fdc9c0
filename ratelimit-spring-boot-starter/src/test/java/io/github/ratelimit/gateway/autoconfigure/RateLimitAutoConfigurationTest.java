package io.github.ratelimit.gateway.autoconfigure;

import java.util.Optional;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.gateway.actuate.RateLimiterHealthIndicator;
import io.github.ratelimit.gateway.actuate.RateLimitsEndpointProperties;
import io.github.ratelimit.gateway.chain.ClientRateLimiter;
import io.github.ratelimit.gateway.chain.FailurePolicyLimiter;
import io.github.ratelimit.gateway.chain.ShardCircuitBreakers;
import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.gateway.chain.LeasingRateLimiter;
import io.github.ratelimit.gateway.chain.LocalFallbackLimiter;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.ScopedRateLimiter;
import io.github.ratelimit.gateway.client.ClientKeyResolver;
import io.github.ratelimit.gateway.webflux.RateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.plan.PrincipalPlanResolver;
import io.github.ratelimit.gateway.plan.SecurityPrincipalPlanResolver;
import io.github.ratelimit.gateway.plan.StaticPlanResolver;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitAutoConfigurationTest {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class))
		.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
				"ratelimit.plans.anonymous.default[0].refill-tokens=60",
				"ratelimit.plans.anonymous.default[0].refill-period=1m");

	@Test
	void everyClassNamedInImportsLoadsAndIsAnAutoConfiguration() throws IOException, ClassNotFoundException {
		String location = "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";
		List<String> names;
		try (InputStream in = getClass().getClassLoader().getResourceAsStream(location)) {
			names = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
				.map(String::strip)
				.filter((l) -> !l.isEmpty() && !l.startsWith("#"))
				.toList();
		}
		assertThat(names).contains(RateLimitAutoConfiguration.class.getName(),
				RateLimitDisabledAutoConfiguration.class.getName(),
				RateLimitHealthAutoConfiguration.class.getName(), RateLimitEndpointAutoConfiguration.class.getName(),
				RateLimitPlanStoreAutoConfiguration.class.getName(),
				RateLimitClientAddressAutoConfiguration.class.getName(),
				RateLimitLettuceAutoConfiguration.class.getName(),
				RateLimitRedisClusterAutoConfiguration.class.getName(),
				RateLimitSecurityAutoConfiguration.class.getName(),
				RateLimitRedisConnectionAutoConfiguration.class.getName());
		for (String name : names) {
			assertThat(Class.forName(name)).hasAnnotation(AutoConfiguration.class);
		}
	}

	@Test
	void createsTheFilterAndRedisLimiterWhenRedisIsConfigured() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RateLimitGatewayFilterFactory.class);
			// the chain, layer by layer: store -> shard breakers -> leases -> scopes -> failure policy -> over-limit
			// cache -> filter
			assertThat(context).getBean("rateLimitClientRateLimiter").isInstanceOf(RedisRateLimitStore.class);
			LeasingRateLimiter leases = context.getBean("rateLimitLeasingRateLimiter", LeasingRateLimiter.class);
			assertThat(leases.getStore()).isInstanceOfSatisfying(ShardCircuitBreakers.GuardedStore.class,
					(guarded) -> assertThat(guarded.getStore()).isSameAs(context.getBean("rateLimitClientRateLimiter")));
			assertThat(context).hasSingleBean(ShardCircuitBreakers.class);
			assertThat(context.getBean(ScopedRateLimiter.class).getStore()).isSameAs(leases);
			assertThat(context).hasSingleBean(LocalFallbackLimiter.class);
			assertThat(context).hasSingleBean(FailurePolicyLimiter.class);
			assertThat(context).hasSingleBean(OverLimitCache.class);
			assertThat(context).getBean(PlanResolver.class).isInstanceOf(StaticPlanResolver.class);
			assertThat(context).hasSingleBean(ClientKeyResolver.class);
		});
	}

	@Test
	void withSpringSecurityPrincipalPlansComeFromClaimsAndAuthorities() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitSecurityAutoConfiguration.class))
			.withPropertyValues("ratelimit.principal.plan-claim=tier", "ratelimit.principal.plan-authority-prefix=TIER_")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).getBean(PrincipalPlanResolver.class)
					.isInstanceOf(SecurityPrincipalPlanResolver.class)
					.hasToString("SecurityPrincipalPlanResolver[claim=tier, authorityPrefix=TIER_]");
			});
	}

	@Test
	void withoutSpringSecurityTheStarterStartsAndPrincipalsNameNoPlan() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitSecurityAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.security."))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(ClientKeyResolver.class);
				assertThat(context).getBean(PrincipalPlanResolver.class).isSameAs(PrincipalPlanResolver.NAME_ONLY);
			});
	}

	@Test
	void backsOffWithoutRedis() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
					"ratelimit.plans.anonymous.default[0].refill-tokens=60",
					"ratelimit.plans.anonymous.default[0].refill-period=1m")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(ClientRateLimiter.class)
				.doesNotHaveBean(RateLimitGatewayFilterFactory.class));
	}

	@Test
	void userBeansReplaceTheDefaults() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			// the user's store, under the starter's layers (the scopes layer is a ClientRateLimiter too)
			assertThat(context).doesNotHaveBean("rateLimitClientRateLimiter").hasSingleBean(PlanResolver.class);
			// a store that cannot lease gets no lease layer
			assertThat(context).doesNotHaveBean("rateLimitLeasingRateLimiter");
			assertThat(context.getBean(ScopedRateLimiter.class).getStore()).isInstanceOfSatisfying(
					ShardCircuitBreakers.GuardedStore.class,
					(guarded) -> assertThat(guarded.getStore()).isSameAs(UserBeans.LIMITER));
			assertThat(context.getBean(PlanResolver.class)).isSameAs(UserBeans.PLANS);
			assertThat(context).hasSingleBean(RateLimitGatewayFilterFactory.class);
		});
	}

	@Test
	void theOverLimitCacheCanBeTurnedOff() {
		this.runner.withPropertyValues("ratelimit.over-limit-cache.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(OverLimitCache.class);
			assertThat(context).hasSingleBean(FailurePolicyLimiter.class).hasSingleBean(RateLimitGatewayFilterFactory.class);
		});
	}

	@Test
	void reusesTheApplicationsCircuitBreakerRegistry() {
		CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
		this.runner.withBean(CircuitBreakerRegistry.class, () -> registry).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(registry.find(RateLimitAutoConfiguration.CIRCUIT_BREAKER_NAME)).isPresent();
			assertThat(context.getBean(ShardCircuitBreakers.class).breaker(StoreShards.SINGLE_SHARD))
				.isSameAs(registry.circuitBreaker(RateLimitAutoConfiguration.CIRCUIT_BREAKER_NAME));
		});
	}

	@Test
	void registersTheHealthComponent() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class,
					RateLimitHealthAutoConfiguration.class))
			.withPropertyValues("ratelimit.plans.anonymous.default[0].capacity=60",
					"ratelimit.plans.anonymous.default[0].refill-tokens=60",
					"ratelimit.plans.anonymous.default[0].refill-period=1m")
			.run((context) -> assertThat(context).hasSingleBean(RateLimiterHealthIndicator.class));
	}

	@Test
	void endpointShowsClientsOnlyToAuthorizedCallersByDefault() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RateLimitsEndpointProperties access = context.getBean(RateLimitsEndpointProperties.class);
				assertThat(access.getShowClients()).isEqualTo(Show.WHEN_AUTHORIZED);
				assertThat(access.getRoles()).isEmpty();
			});
	}

	@Test
	void endpointAccessPropertiesBind() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.ratelimits.show-clients=never",
					"management.endpoint.ratelimits.roles=OPERATOR,ROLE_ADMIN")
			.run((context) -> {
				RateLimitsEndpointProperties access = context.getBean(RateLimitsEndpointProperties.class);
				assertThat(access.getShowClients()).isEqualTo(Show.NEVER);
				assertThat(access.getRoles()).containsExactly("OPERATOR", "ROLE_ADMIN");
			});
	}

	@Test
	void aBadShowClientsValueStopsStartUpNamingTheProperty() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.ratelimits.show-clients=operators")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'management.endpoint.ratelimits.show-clients'"));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		static final ClientRateLimiter LIMITER = (client, limits, cost) -> CompletableFuture
			.completedFuture(RateLimitDecision.unavailable(limits));

		static final PlanResolver PLANS = (apiKey) -> CompletableFuture.completedFuture(Optional.empty());

		@Bean
		ClientRateLimiter myLimiter() {
			return LIMITER;
		}

		@Bean
		PlanResolver myPlans() {
			return PLANS;
		}

	}

}
