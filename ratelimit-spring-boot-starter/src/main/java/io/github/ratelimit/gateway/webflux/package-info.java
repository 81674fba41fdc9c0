/**
 * The Spring Cloud Gateway WebFlux front end: the {@code RateLimit} gateway filter, its route validator, web filters
 * and response writer.
 */
@NullMarked
package io.github.ratelimit.gateway.webflux;

import org.jspecify.annotations.NullMarked;
