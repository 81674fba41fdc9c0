/**
 * The Redis store: the Lua script and its executors, key names, the limiter's own connection, the instance counter and
 * the Redis plan store.
 */
@NullMarked
package io.github.ratelimit.gateway.redis;

import org.jspecify.annotations.NullMarked;
