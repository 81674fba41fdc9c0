/**
 * The {@code ratelimit.*} configuration properties, their validation at start-up, and the limits they define.
 */
@NullMarked
package io.github.ratelimit.gateway.properties;

import org.jspecify.annotations.NullMarked;
