/**
 * A runnable Spring Cloud Gateway (WebFlux) using the rate limit starter, with a demo upstream, for demos and the Helm
 * chart.
 */
@NullMarked
package io.github.ratelimit.sample;

import org.jspecify.annotations.NullMarked;
