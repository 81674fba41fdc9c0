/**
 * Upstream protection: a concurrency limit per protected upstream (adaptive, found from latency, or fixed), shared
 * out by request priority, that sheds what the upstream cannot take. Local to each gateway instance, with no Redis.
 */
@NullMarked
package io.github.ratelimit.gateway.protection;

import org.jspecify.annotations.NullMarked;
