/**
 * Small utilities shared by several packages: a throttled log line and the classification of upstream failures.
 */
@NullMarked
package io.github.ratelimit.gateway.support;

import org.jspecify.annotations.NullMarked;
