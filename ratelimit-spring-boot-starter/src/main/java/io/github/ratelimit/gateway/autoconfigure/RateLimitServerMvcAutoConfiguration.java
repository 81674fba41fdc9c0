package io.github.ratelimit.gateway.autoconfigure;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.mvc.CanonicalPathServletFilter;
import io.github.ratelimit.gateway.mvc.ProblemDetailServletResponseWriter;
import io.github.ratelimit.gateway.mvc.RateLimitFilterFunctions;
import io.github.ratelimit.gateway.mvc.RateLimitServletResponseWriter;
import io.github.ratelimit.gateway.mvc.RateLimitFilterFunctionsCheck;
import io.github.ratelimit.gateway.mvc.ServerMvcFrontEnd;
import io.github.ratelimit.gateway.mvc.ServerMvcRouteValidator;
import io.github.ratelimit.gateway.mvc.SlotReleaseServletFilter;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.filter.FilterSupplier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Server MVC front end: the {@code RateLimit} filter of Spring Cloud Gateway Server MVC
 * ({@link RateLimitFilterFunctions}, over the core's {@link RateLimitHandler}), the path check and slot release
 * servlet filters, the response writer and the validator of the {@code spring.cloud.gateway.server.webmvc.*} routes.
 * Only in a servlet web application with Gateway Server MVC on the class path; a WebFlux application gets
 * {@link RateLimitWebFluxAutoConfiguration} instead. Every bean but the route validator can be replaced by declaring
 * one of the same type. With {@code ratelimit.enabled=false} there is no front end, so that every filter lets every
 * request pass; {@link RateLimitFilterFunctionsCheck#disabled()} names them at start-up.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.cloud.gateway.server.mvc.GatewayServerMvcAutoConfiguration")
@ConditionalOnClass(FilterSupplier.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
public final class RateLimitServerMvcAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
	static class Enabled {

		/** The rules of the Server MVC routes' {@code RateLimit} arguments; not replaceable, like the check. */
		@Bean
		ServerMvcRouteValidator rateLimitServerMvcRouteValidator(ObjectProvider<GatewayMvcProperties> gateway) {
			return new ServerMvcRouteValidator(gateway.getIfAvailable());
		}

		/**
		 * Writes every refusal (429, 503, 400, 501): the {@link RateLimitProblems} body as
		 * {@code application/problem+json}, serialised by the application's {@link JsonMapper}. Replace it by
		 * declaring a {@link RateLimitServletResponseWriter} bean.
		 */
		@Bean
		@ConditionalOnMissingBean
		RateLimitServletResponseWriter rateLimitServletResponseWriter(ObjectProvider<JsonMapper> mapper,
				ObjectProvider<RateLimitProblems> problems) {
			return new ProblemDetailServletResponseWriter(mapper.getIfAvailable(JsonMapper::new),
					problems.getIfAvailable(RateLimitProblems::new));
		}

		/** Refuses or repairs request paths that are not canonical before any route is matched. */
		@Bean
		@ConditionalOnMissingBean
		CanonicalPathServletFilter rateLimitCanonicalPathServletFilter(RateLimitProperties properties,
				RateLimitServletResponseWriter responseWriter) {
			return new CanonicalPathServletFilter(properties.getNonCanonicalPaths(), responseWriter);
		}

		/** Gives back the concurrency slots of a request once its whole response is written. */
		@Bean
		@ConditionalOnMissingBean
		SlotReleaseServletFilter rateLimitSlotReleaseServletFilter() {
			return new SlotReleaseServletFilter();
		}

		/**
		 * The front end the {@code RateLimit} filters use, over the request path shared by the front ends.
		 * @throws RateLimitConfigurationException when the core has no limiter (no Redis connection factory)
		 */
		@Bean
		@ConditionalOnMissingBean
		ServerMvcFrontEnd rateLimitServerMvcFrontEnd(ObjectProvider<RateLimitHandler> handler,
				ObjectProvider<RateLimitRoutes> routes, RateLimitServletResponseWriter responseWriter,
				RateLimitProperties properties) {
			RateLimitHandler available = handler.getIfAvailable();
			if (available == null) {
				throw new RateLimitConfigurationException(List.of(new ConfigurationViolation("spring.data.redis",
						"gives no reactive Redis connection factory, which the RateLimit filter needs.",
						"configure Redis (spring.data.redis.*), or set ratelimit.enabled=false.")));
			}
			return new ServerMvcFrontEnd(available, routes.getObject(), responseWriter,
					(int) properties.getUsage().getReserveBodyLimit().toBytes());
		}

		/** Checks the {@code RateLimit} filters built from Java at start-up; makes the configured routes known. */
		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBean(RateLimitRoutes.class)
		RateLimitFilterFunctionsCheck rateLimitFilterFunctionsCheck(RateLimitRoutes routes,
				ServerMvcRouteValidator rateLimitServerMvcRouteValidator) {
			return new RateLimitFilterFunctionsCheck(routes, rateLimitServerMvcRouteValidator);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, havingValue = false)
	static class Disabled {

		/** Names the {@code RateLimit} filters, which let every request pass (one WARN at start-up). */
		@Bean
		@ConditionalOnMissingBean
		RateLimitFilterFunctionsCheck rateLimitFilterFunctionsCheck() {
			return RateLimitFilterFunctionsCheck.disabled();
		}

	}

}
