/**
 * The Spring Cloud Gateway Server MVC front end: the {@code RateLimit} filter functions, their route validator,
 * servlet filters and response writer.
 */
@NullMarked
package io.github.ratelimit.gateway.mvc;

import org.jspecify.annotations.NullMarked;
