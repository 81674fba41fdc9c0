package io.github.ratelimit.gateway.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Enumeration;

import io.github.ratelimit.gateway.webflux.CanonicalPathWebFilter;
import io.github.ratelimit.gateway.webflux.DisabledRateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.webflux.RateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.webflux.RateLimitResponseWriter;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.ClusterTopologyRefreshCustomizer;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.enabled}: {@code true} by default (and so in the configuration metadata); {@code false} leaves
 * one bean of the starter, the pass-through {@code RateLimit} filter, and does not even read the rest of the
 * {@code ratelimit.*} configuration.
 */
class RateLimitDisabledAutoConfigurationTest {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class,
				RateLimitDisabledAutoConfiguration.class, RateLimitHealthAutoConfiguration.class,
				RateLimitEndpointAutoConfiguration.class, RateLimitPlanStoreAutoConfiguration.class,
				RateLimitClientAddressAutoConfiguration.class, RateLimitLettuceAutoConfiguration.class,
				RateLimitRedisClusterAutoConfiguration.class))
		// the Lettuce settings on the application's client too (opt-in), so that their absence when disabled is seen
		.withPropertyValues("ratelimit.redis.configure-application-client=true",
				"ratelimit.plans.anonymous.default[0].capacity=60",
				"ratelimit.plans.anonymous.default[0].refill-tokens=60",
				"ratelimit.plans.anonymous.default[0].refill-period=1m");

	@Test
	void enabledByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitGatewayFilterFactory.class)
				.hasSingleBean(RateLimitResponseWriter.class)
				.doesNotHaveBean(DisabledRateLimitGatewayFilterFactory.class);
			assertThat(context).getBean("rateLimitRejectCommandsWhenDisconnected").isNotNull();
		});
	}

	@Test
	void disabledLeavesOnlyThePassThroughFilterAndTheApplicationsRedis() {
		// an invalid limit: the configuration of a disabled starter is not read
		this.runner.withPropertyValues("ratelimit.enabled=false", "ratelimit.plans.anonymous.default[0].capacity=0")
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(DisabledRateLimitGatewayFilterFactory.class)
					.doesNotHaveBean(RateLimitGatewayFilterFactory.class)
					.doesNotHaveBean(RateLimitProperties.class)
					.doesNotHaveBean(RateLimitResponseWriter.class)
					.doesNotHaveBean(CanonicalPathWebFilter.class)
					.doesNotHaveBean(LettuceClientOptionsBuilderCustomizer.class)
					.doesNotHaveBean(ClientResourcesBuilderCustomizer.class)
					.doesNotHaveBean(ClusterTopologyRefreshCustomizer.class)
					.hasSingleBean(ReactiveRedisConnectionFactory.class); // the application's, untouched
				assertThat(context.getBeansOfType(Object.class).values())
					.filteredOn((bean) -> bean.getClass().getName().startsWith("io.github.ratelimit.gateway."))
					.extracting((bean) -> (Object) bean.getClass())
					.containsExactlyInAnyOrder(RateLimitDisabledAutoConfiguration.class,
							DisabledRateLimitGatewayFilterFactory.class);
			});
	}

	@Test
	void theSwitchIsInTheConfigurationMetadataWithItsDefault() throws IOException {
		JsonNode enabled = null;
		// the starter's own metadata (every Spring Boot jar has a file of this name too)
		Enumeration<URL> files = getClass().getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json");
		while (files.hasMoreElements()) {
			try (InputStream in = files.nextElement().openStream()) {
				for (JsonNode property : JsonMapper.builder().build().readTree(in).path("properties")) {
					if (property.path("name").asString().equals(RateLimitProperties.ENABLED)) {
						enabled = property;
					}
				}
			}
		}
		assertThat(enabled).as("ratelimit.enabled in the metadata").isNotNull();
		assertThat(enabled.path("type").asString()).isEqualTo("java.lang.Boolean");
		assertThat(enabled.path("defaultValue").isBoolean()).isTrue();
		assertThat(enabled.path("defaultValue").asBoolean()).isTrue();
		assertThat(enabled.path("description").asString()).startsWith("Whether rate limiting is on.");
	}

}
