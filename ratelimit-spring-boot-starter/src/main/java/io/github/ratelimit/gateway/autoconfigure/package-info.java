/**
 * Spring Boot auto-configuration of the rate limiter: the core, the Redis connection, plan look-up, security, the
 * WebFlux and Server MVC front ends, health and the actuator endpoint.
 */
@NullMarked
package io.github.ratelimit.gateway.autoconfigure;

import org.jspecify.annotations.NullMarked;
