/**
 * The HTTP contract shared by both front ends: rate limit header fields, RFC 9457 problem bodies of refusals and the
 * canonical path check.
 */
@NullMarked
package io.github.ratelimit.gateway.http;

import org.jspecify.annotations.NullMarked;
