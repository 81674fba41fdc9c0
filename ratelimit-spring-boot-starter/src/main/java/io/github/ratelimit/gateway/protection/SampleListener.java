package io.github.ratelimit.gateway.protection;

/**
 * Told of every latency sample an upstream protection's limit takes (for meters).
 */
@FunctionalInterface
public interface SampleListener {

	/**
	 * A sample was taken.
	 * @param protection the protection's name
	 * @param priority the priority of the request sampled
	 * @param latencyNanos from forwarding to the answer's header fields (or the failure), nanoseconds, at least 1
	 * @param dropped whether it counts as a drop (a failure, or a status of 500 or more)
	 */
	void sampled(String protection, Priority priority, long latencyNanos, boolean dropped);

}
