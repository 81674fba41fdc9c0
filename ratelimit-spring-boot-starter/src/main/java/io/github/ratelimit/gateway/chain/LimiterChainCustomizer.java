package io.github.ratelimit.gateway.chain;

/**
 * Customizes the {@link LimiterChainBuilder} the auto-configuration builds the limiter chain with, after it has
 * applied the {@code ratelimit.*} properties. Declare beans of this type to change a layer's settings (a fallback of
 * one's own, a circuit breaker configuration, no over-limit cache...); they run in their {@code @Order}.
 */
@FunctionalInterface
public interface LimiterChainCustomizer {

	/**
	 * Customize the builder.
	 * @param builder the builder, with the properties applied
	 */
	void customize(LimiterChainBuilder builder);

}
