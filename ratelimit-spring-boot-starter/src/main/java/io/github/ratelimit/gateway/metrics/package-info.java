/**
 * Observability of the limiter: Micrometer meters of decisions and store calls, and the rate-bounded denial log.
 */
@NullMarked
package io.github.ratelimit.gateway.metrics;

import org.jspecify.annotations.NullMarked;
