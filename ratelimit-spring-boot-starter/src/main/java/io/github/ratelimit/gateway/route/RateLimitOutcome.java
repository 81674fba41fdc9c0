package io.github.ratelimit.gateway.route;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.protection.UpstreamPermit;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * What a front end does with one request of a rate limited route, decided by {@link RateLimitHandler#handle}:
 * forward it upstream holding its concurrency slots, or answer it with a refusal; in both cases with the given rate
 * limit header fields.
 *
 * @param headers the rate limit header fields to set on the response ({@code RateLimit-Policy}/{@code RateLimit} or
 * {@code X-RateLimit-*}); empty when there are none to write (a client not identified, a shadow route without
 * {@code ratelimit.shadow-headers}); read-only
 * @param slots the concurrency slots a forwarded request holds, to be ended once its exchange is over (see
 * {@link HeldSlots}); {@link HeldSlots#NONE} when it holds none or is refused
 * @param refusal the answer to write instead of forwarding; {@code null} when the request goes upstream
 * @param meter reads a forwarded request's answer and settles what it reserved once the exchange is over (the front
 * end feeds it, see {@link UsageMeter}); {@link UsageMeter#NONE} when the route's answers do not change what it is
 * charged, and for refusals
 * @param permit the forwarded request's place in its route's upstream protection: the front end tells it how the
 * upstream answered ({@link UpstreamPermit#answered}, {@link UpstreamPermit#failed}); {@code slots} end it with the
 * exchange. {@link UpstreamPermit#NONE} on a route without protection, and for refusals
 */
public record RateLimitOutcome(HttpHeaders headers, HeldSlots slots, @Nullable RateLimitRefusal refusal,
		UsageMeter meter, UpstreamPermit permit) {

	/**
	 * An outcome of a route without upstream protection.
	 * @param headers the rate limit header fields to set on the response
	 * @param slots the concurrency slots a forwarded request holds
	 * @param refusal the answer to write instead of forwarding, or {@code null}
	 * @param meter reads a forwarded request's answer and settles what it reserved
	 */
	public RateLimitOutcome(HttpHeaders headers, HeldSlots slots, @Nullable RateLimitRefusal refusal,
			UsageMeter meter) {
		this(headers, slots, refusal, meter, UpstreamPermit.NONE);
	}

	/**
	 * An outcome whose answer does not change what the request is charged.
	 * @param headers the rate limit header fields to set on the response
	 * @param slots the concurrency slots a forwarded request holds
	 * @param refusal the answer to write instead of forwarding, or {@code null}
	 */
	public RateLimitOutcome(HttpHeaders headers, HeldSlots slots, @Nullable RateLimitRefusal refusal) {
		this(headers, slots, refusal, UsageMeter.NONE);
	}

	/**
	 * Give back what this outcome took when its request is not forwarded after all (abandoned): its slots, and what
	 * it reserved.
	 */
	void abandon() {
		this.slots.abandon();
		this.meter.abandon();
	}

	/**
	 * Whether the request goes upstream.
	 * @return {@code refusal == null}
	 */
	public boolean admitted() {
		return this.refusal == null;
	}

	/**
	 * Set the header fields on a response's headers, replacing fields of the same names.
	 * @param target the response's headers, writable
	 */
	public void writeHeaders(HttpHeaders target) {
		this.headers.forEach(target::put);
	}

	/**
	 * A refusal with no header fields.
	 * @param refusal the answer
	 * @return the outcome
	 */
	static RateLimitOutcome refused(RateLimitRefusal refusal) {
		return new RateLimitOutcome(HttpHeaders.readOnlyHttpHeaders(new HttpHeaders()), HeldSlots.NONE, refusal);
	}

}
