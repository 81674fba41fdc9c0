/**
 * A runnable Spring Cloud Gateway Server MVC using the rate limit starter, with a demo upstream.
 */
@NullMarked
package io.github.ratelimit.sample.mvc;

import org.jspecify.annotations.NullMarked;
