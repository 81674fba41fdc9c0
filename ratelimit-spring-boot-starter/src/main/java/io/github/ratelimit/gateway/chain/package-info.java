/**
 * The limiter chain: the layers a rate limit check passes through (over-limit cache, failure policy with its local
 * fallback, scopes, leases, per-shard circuit breakers) down to the shared store.
 */
@NullMarked
package io.github.ratelimit.gateway.chain;

import org.jspecify.annotations.NullMarked;
