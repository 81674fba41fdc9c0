package io.github.ratelimit.benchmarks;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one {@code wrk --latency} run printed.
 *
 * @param requestsPerSecond requests per second over the run ({@code Requests/sec})
 * @param p50Micros median latency, µs
 * @param p90Micros 90th percentile latency, µs
 * @param p99Micros 99th percentile latency, µs
 * @param requests requests completed
 * @param non2xx responses with a status other than 2xx or 3xx (for a rate limiter: denials)
 * @param socketErrors connect, read, write errors and timeouts
 */
record WrkResult(double requestsPerSecond, double p50Micros, double p90Micros, double p99Micros, long requests,
		long non2xx, long socketErrors) {

	private static final Pattern RPS = Pattern.compile("^Requests/sec:\\s+([0-9.]+)", Pattern.MULTILINE);

	private static final Pattern REQUESTS = Pattern.compile("^\\s*(\\d+) requests in", Pattern.MULTILINE);

	private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses:\\s+(\\d+)");

	private static final Pattern SOCKET_ERRORS = Pattern
		.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

	/** Requests that got a 2xx or 3xx answer (for a rate limiter: the allowed ones). */
	long allowed() {
		return this.requests - this.non2xx;
	}

	/**
	 * Parse wrk's text output (with {@code --latency}).
	 * @param text what wrk printed
	 * @return the figures
	 * @throws IllegalArgumentException if the text has no {@code Requests/sec} line
	 */
	static WrkResult parse(String text) {
		Matcher rps = RPS.matcher(text);
		if (!rps.find()) {
			throw new IllegalArgumentException("not wrk output (no Requests/sec line): " + text);
		}
		long errors = 0;
		Matcher socket = SOCKET_ERRORS.matcher(text);
		if (socket.find()) {
			for (int g = 1; g <= 4; g++) {
				errors += Long.parseLong(socket.group(g));
			}
		}
		return new WrkResult(Double.parseDouble(rps.group(1)), percentile(text, "50%"), percentile(text, "90%"),
				percentile(text, "99%"), number(REQUESTS, text), number(NON_2XX, text), errors);
	}

	private static long number(Pattern pattern, String text) {
		Matcher m = pattern.matcher(text);
		return m.find() ? Long.parseLong(m.group(1)) : 0;
	}

	private static double percentile(String text, String label) {
		Matcher m = Pattern.compile("^\\s+" + Pattern.quote(label) + "\\s+(\\S+)", Pattern.MULTILINE).matcher(text);
		return m.find() ? micros(m.group(1)) : Double.NaN;
	}

	/**
	 * A wrk duration in microseconds.
	 * @param value e.g. {@code 612.00us}, {@code 1.23ms}, {@code 1.01s}, {@code 2.00m}
	 * @return microseconds
	 */
	static double micros(String value) {
		Matcher m = Pattern.compile("^([0-9.]+)(us|ms|s|m|h)?$").matcher(value.trim());
		if (!m.matches()) {
			throw new IllegalArgumentException("not a wrk duration: " + value);
		}
		double n = Double.parseDouble(m.group(1));
		String unit = (m.group(2) != null) ? m.group(2) : "us";
		return switch (unit) {
			case "ms" -> n * 1e3;
			case "s" -> n * 1e6;
			case "m" -> n * 60e6;
			case "h" -> n * 3600e6;
			default -> n;
		};
	}

}
