/**
 * The limits themselves as immutable values: algorithms, one limit definition, its scope, and the limits of a (plan,
 * endpoint group).
 */
@NullMarked
package io.github.ratelimit.gateway.limits;

import org.jspecify.annotations.NullMarked;
