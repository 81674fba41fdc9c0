package io.github.ratelimit.gateway.support;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;

/**
 * Tells apart the errors of a proxied request that never reached its upstream, for the front ends' slot release.
 */
public final class UpstreamFailures {

	private UpstreamFailures() {
	}

	/**
	 * Whether an error, or one of its causes, says the connection to the upstream was never opened: refused, timed
	 * out while connecting, or an unknown host. The request was then not sent.
	 * @param error an error of the proxied exchange
	 * @return whether the upstream never got the request
	 */
	public static boolean notConnected(Throwable error) {
		int depth = 0;
		for (Throwable cause = error; cause != null && depth < 32; cause = cause.getCause(), depth++) {
			if (cause instanceof ConnectException || cause instanceof UnknownHostException
					|| cause instanceof HttpConnectTimeoutException) {
				return true;
			}
		}
		return false;
	}

}
