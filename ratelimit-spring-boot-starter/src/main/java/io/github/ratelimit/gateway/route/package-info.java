/**
 * The request path of a rate limited route, the same for every front end, and the {@code RateLimit} filter's arguments
 * and their rules.
 */
@NullMarked
package io.github.ratelimit.gateway.route;

import org.jspecify.annotations.NullMarked;
