/**
 * The limits themselves as immutable values: algorithms, one limit definition, its scope, the limits of a (plan,
 * endpoint group), and the calendar or fixed period a quota counts in.
 */
@NullMarked
package io.github.ratelimit.gateway.limits;

import org.jspecify.annotations.NullMarked;
