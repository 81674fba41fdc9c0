/**
 * What both sample gateways run: the demo upstream's start-up and answers, and the Redis start-up check.
 */
@NullMarked
package io.github.ratelimit.sample.support;

import org.jspecify.annotations.NullMarked;
