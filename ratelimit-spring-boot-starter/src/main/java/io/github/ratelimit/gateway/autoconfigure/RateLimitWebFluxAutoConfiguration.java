package io.github.ratelimit.gateway.autoconfigure;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.redis.ServerEventLoops;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import io.github.ratelimit.gateway.webflux.CanonicalPathWebFilter;
import io.github.ratelimit.gateway.webflux.ReactorNettyEventLoops;
import io.github.ratelimit.gateway.webflux.ProblemDetailResponseWriter;
import io.github.ratelimit.gateway.webflux.RateLimitGatewayFilterFactory;
import io.github.ratelimit.gateway.webflux.RateLimitResponseWriter;
import io.github.ratelimit.gateway.webflux.RateLimitRouteValidator;
import io.github.ratelimit.gateway.webflux.SlotReleaseWebFilter;
import io.github.ratelimit.gateway.webflux.UpstreamRequestGlobalFilter;
import io.github.ratelimit.gateway.webflux.UsageMeteringGlobalFilter;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.codec.ServerCodecConfigurer;

/**
 * The WebFlux front end: the {@code RateLimit} gateway filter of Spring Cloud Gateway on WebFlux over the core's
 * {@link RateLimitHandler}, the path check and slot release web filters, the response writer and the validator of
 * the {@code spring.cloud.gateway.server.webflux.*} routes. Only in a reactive web application with Gateway's
 * WebFlux server on the class path; a Server MVC application gets {@code RateLimitServerMvcAutoConfiguration}
 * instead. Every bean but the route validator can be replaced by declaring one of the same type.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass(GatewayFilterFactory.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = RateLimitProperties.ENABLED, matchIfMissing = true)
public final class RateLimitWebFluxAutoConfiguration {

	/** The rules of the WebFlux routes' {@code RateLimit} arguments; not replaceable, like the check that runs them. */
	/**
	 * The WebFlux server's event loops, on which the limiter's store keeps a Redis connection each.
	 */
	@Bean
	@ConditionalOnMissingBean
	ServerEventLoops rateLimitServerEventLoops(ObjectProvider<ReactorResourceFactory> resourceFactory) {
		return ReactorNettyEventLoops.of(resourceFactory.getIfAvailable());
	}

	@Bean
	RateLimitRouteValidator rateLimitRouteValidator(ObjectProvider<GatewayProperties> gatewayProperties) {
		return new RateLimitRouteValidator(gatewayProperties.getIfAvailable());
	}

	/**
	 * Writes every refusal (429, 503, 400, 501): the {@link RateLimitProblems} body as
	 * {@code application/problem+json}, encoded by the application's codecs (Spring Boot's {@code JsonMapper}).
	 * Replace it by declaring a {@link RateLimitResponseWriter} bean.
	 */
	@Bean
	@ConditionalOnMissingBean
	RateLimitResponseWriter rateLimitResponseWriter(ObjectProvider<ServerCodecConfigurer> codecs,
			ObjectProvider<RateLimitProblems> problems) {
		return new ProblemDetailResponseWriter(codecs.getIfAvailable(ServerCodecConfigurer::create),
				problems.getIfAvailable(RateLimitProblems::new));
	}

	/** Refuses or repairs request paths that are not canonical before any route is matched. */
	@Bean
	@ConditionalOnMissingBean
	CanonicalPathWebFilter rateLimitCanonicalPathWebFilter(RateLimitProperties properties,
			RateLimitResponseWriter responseWriter) {
		return new CanonicalPathWebFilter(properties.getNonCanonicalPaths(), responseWriter);
	}

	/**
	 * Ends the concurrency slots of a request once its exchange is over: given back once the upstream's response is
	 * written (or the request never reached the upstream), kept until they expire otherwise.
	 */
	@Bean
	@ConditionalOnMissingBean
	SlotReleaseWebFilter rateLimitSlotReleaseWebFilter() {
		return new SlotReleaseWebFilter();
	}

	/** Marks the exchanges whose request is sent to an upstream, for the slot release web filter. */
	@Bean
	@ConditionalOnMissingBean
	UpstreamRequestGlobalFilter rateLimitUpstreamRequestGlobalFilter() {
		return new UpstreamRequestGlobalFilter();
	}

	/**
	 * Shows the answers of routes whose {@code RateLimit} filter settles what requests reserved ({@code usage},
	 * {@code count-when}) to that filter; the rest of an answer whose client went is read for at most Gateway's
	 * {@code httpclient.response-timeout} (a route's own when it sets one).
	 */
	@Bean
	@ConditionalOnMissingBean
	UsageMeteringGlobalFilter rateLimitUsageMeteringGlobalFilter(ObjectProvider<HttpClientProperties> httpClient) {
		HttpClientProperties properties = httpClient.getIfAvailable();
		return new UsageMeteringGlobalFilter((properties != null) ? properties.getResponseTimeout() : null);
	}

	/** The filter, over the request path shared by the front ends. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RateLimitHandler.class)
	RateLimitGatewayFilterFactory rateLimitGatewayFilterFactory(RateLimitHandler handler, RateLimitRoutes routes,
			RateLimitResponseWriter responseWriter, RateLimitProperties properties) {
		return new RateLimitGatewayFilterFactory(handler, routes, responseWriter,
				properties.getUsage().getReserveBodyLimit().toBytes());
	}

}
