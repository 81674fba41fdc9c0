/**
 * Operations support: the {@code rateLimiter} health component and the {@code ratelimits} actuator endpoint.
 */
@NullMarked
package io.github.ratelimit.gateway.actuate;

import org.jspecify.annotations.NullMarked;
