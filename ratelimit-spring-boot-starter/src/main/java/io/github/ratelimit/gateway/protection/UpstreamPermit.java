package io.github.ratelimit.gateway.protection;

/**
 * One request's place in an upstream protection's limit, from its admission until its exchange is over. The front end
 * tells how the upstream answered ({@link #answered} or {@link #failed}, at most one counts) and ends it once
 * ({@link #release}). A permit released without an answer (the client went away first, the request was refused or
 * never forwarded) gives no latency sample.
 */
public interface UpstreamPermit {

	/** No permit: a route without protection. */
	UpstreamPermit NONE = new UpstreamPermit() {

		@Override
		public void forwarded() {
		}

		@Override
		public void answered(int status) {
		}

		@Override
		public void failed() {
		}

		@Override
		public void release() {
		}

		@Override
		public String toString() {
			return "UpstreamPermit.NONE";
		}

	};

	/**
	 * The request goes upstream now: its latency sample is timed from here. Called once; a later call does nothing.
	 */
	void forwarded();

	/**
	 * The upstream's response header fields arrived (or the gateway answered in its place): a latency sample from
	 * {@link #forwarded()}, a drop when {@code status} is 500 or more. Only the first of {@code answered} and
	 * {@link #failed()} counts, and only before {@link #release()}; without {@link #forwarded()} it does nothing.
	 * @param status the status code of the answer, 100 to 599
	 */
	void answered(int status);

	/**
	 * The upstream call failed before an answer (timeout, connection refused or reset, read error): a drop. Only the
	 * first of {@link #answered} and {@code failed} counts, and only before {@link #release()}.
	 */
	void failed();

	/**
	 * The exchange is over: the request leaves the protection's requests in flight. Idempotent; never throws.
	 */
	void release();

}
