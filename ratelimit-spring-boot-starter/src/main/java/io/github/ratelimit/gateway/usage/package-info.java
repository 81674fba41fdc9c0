/**
 * How much an upstream's answer used, read from the answer as it passes: a number at a {@link UsageField} path
 * (such as {@code usage.total_tokens}) in a JSON body ({@link JsonFieldReader}) or in the last event of a
 * {@code text/event-stream} body that carries it ({@link EventStreamReader}), read chunk by chunk without buffering
 * the body, each reader holding at most a fixed number of bytes whatever the body's size, and answered as a
 * {@link UsageReading}.
 */
@NullMarked
package io.github.ratelimit.gateway.usage;

import org.jspecify.annotations.NullMarked;
