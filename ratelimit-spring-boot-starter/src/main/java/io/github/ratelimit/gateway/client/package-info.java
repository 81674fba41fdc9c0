/**
 * Client identification: who a request is limited as (API key, principal, header value or IP address) and with which
 * plan.
 */
@NullMarked
package io.github.ratelimit.gateway.client;

import org.jspecify.annotations.NullMarked;
