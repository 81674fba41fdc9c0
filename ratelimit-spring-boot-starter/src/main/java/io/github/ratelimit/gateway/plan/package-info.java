/**
 * Plan look-up: the plan of an API key (static map or a cached store) and of an authenticated principal.
 */
@NullMarked
package io.github.ratelimit.gateway.plan;

import org.jspecify.annotations.NullMarked;
