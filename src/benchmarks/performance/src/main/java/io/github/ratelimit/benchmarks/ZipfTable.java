package io.github.ratelimit.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The cumulative distribution of a Zipf law over {@code n} keys: key {@code k} (1-based rank) is drawn with
 * probability {@code k^-s / H(n, s)}, {@code H(n, s) = sum_{i=1..n} i^-s} (the generalised harmonic number). The wrk
 * script {@code api-keys.lua} loads the table written by {@link #write} and draws a key per request by binary search
 * of a uniform random number in it.
 */
final class ZipfTable {

	private ZipfTable() {
	}

	/**
	 * The cumulative probabilities.
	 * @param n number of keys (at least 1)
	 * @param s the exponent (0 = uniform, 1.0 = classic Zipf)
	 * @return {@code cdf[k]} = probability that a draw is one of the {@code k + 1} most frequent keys; increasing,
	 * the last exactly 1
	 */
	static double[] cdf(int n, double s) {
		if (n < 1) {
			throw new IllegalArgumentException("n must be at least 1, was " + n);
		}
		double[] cdf = new double[n];
		double sum = 0;
		for (int k = 0; k < n; k++) {
			sum += Math.pow(k + 1, -s);
			cdf[k] = sum;
		}
		for (int k = 0; k < n; k++) {
			cdf[k] /= sum;
		}
		cdf[n - 1] = 1.0;
		return cdf;
	}

	/**
	 * The rank (0-based) a uniform random number in [0, 1) draws: the first {@code k} with {@code u < cdf[k]},
	 * by binary search, as the wrk script does it.
	 * @param cdf a table from {@link #cdf}
	 * @param u a number in [0, 1)
	 * @return the key's rank, 0 = the most frequent
	 */
	static int draw(double[] cdf, double u) {
		int lo = 0;
		int hi = cdf.length - 1;
		while (lo < hi) {
			int mid = (lo + hi) >>> 1;
			if (u < cdf[mid]) {
				hi = mid;
			}
			else {
				lo = mid + 1;
			}
		}
		return lo;
	}

	/**
	 * Share of the draws that go to the most frequent keys.
	 * @param cdf a table from {@link #cdf}
	 * @param top how many of the most frequent keys (at least 1)
	 * @return the share, 0 to 1
	 */
	static double topShare(double[] cdf, int top) {
		return cdf[Math.min(top, cdf.length) - 1];
	}

	/**
	 * Write the table for the wrk script: one cumulative probability per line, most frequent key first.
	 * @param file the file
	 * @param n number of keys
	 * @param s the exponent
	 * @throws IOException if it cannot be written
	 */
	static void write(Path file, int n, double s) throws IOException {
		double[] cdf = cdf(n, s);
		try (BufferedWriter writer = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
			for (double p : cdf) {
				writer.write(String.format(Locale.ROOT, "%.12g%n", p));
			}
		}
	}

}
