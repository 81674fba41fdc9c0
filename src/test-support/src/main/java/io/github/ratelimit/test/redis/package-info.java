/**
 * Real Redis servers for tests: standalone, TLS and Cluster, started from a URL, Testcontainers or a local {@code
 * redis-server}, and a TCP proxy to cut connections.
 */
@NullMarked
package io.github.ratelimit.test.redis;

import org.jspecify.annotations.NullMarked;
