package io.github.ratelimit.accuracy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.ratelimit.accuracy.SoakSampler.GcSample;
import io.github.ratelimit.accuracy.SoakSampler.Sample;

/**
 * What a soak run found: per minute, the traffic, the limiter's answers and the processes' state; and the verdicts.
 *
 * <p>The admitted bound is the accuracy report's ({@link UpperBound}): per client, over any interval, never more
 * admitted than {@code capacity + rate × its length}. Times here are the load generator's send times, not Redis'; the
 * decision was made between a request's sending and its answer, so each client's bound is widened by {@code rate ×}
 * the longest round trip of its admitted requests. Each client-minute is checked on the intervals that end in that
 * minute. Only the shared limiter's admissions are held to it: an answer without the {@code RateLimit} field was
 * decided by the local fallback (Redis slower than its timeout, or the breaker open), which by design admits this
 * instance's share of the limit on its own; those are counted apart. The exact limiter is a single token bucket fed the same client's answered requests at their send times
 * (for comparison only: the over-limit cache answers some requests before Redis is asked), the shared limiter's
 * answers only.
 *
 * <p>The key bound: at a sample taken between {@code t0} (before {@code DBSIZE}) and {@code t1} (after), Redis may
 * hold the fixed keys (present before any client, e.g. the instance registry) plus {@code keys per client} for every
 * client whose first request was sent by {@code t1} and whose last request was answered after {@code t0 − (TTL +
 * slack)} (a request writes before it is answered; a client with a request never answered counts to the end),
 * the TTL being the longest a bucket's key lives after its last write ({@code capacity ÷ refill rate}: the time a
 * bucket takes to fill from empty).
 *
 * @param options the run's options
 * @param startMicros when the load began (wall clock, µs)
 * @param endMicros when it stopped
 * @param clients every client of the run
 * @param samples the periodic samples
 * @param gcSamples the heap after full collections
 * @param fixedKeys keys in Redis before the first client
 * @param drainedKeys keys in Redis {@code drain} after the load stopped
 */
record SoakAnalysis(SoakRun.Options options, long startMicros, long endMicros, List<SoakClient> clients,
		List<Sample> samples, List<GcSample> gcSamples, long fixedKeys, long drainedKeys) {

	private static final long MINUTE = 60_000_000L;

	/** Minutes of the run (the last one may be partial). */
	int minutes() {
		return (int) Math.ceil((this.endMicros - this.startMicros) / (double) MINUTE);
	}

	/** The minute (0-based) a time falls in, clamped to the run. */
	int minuteOf(long micros) {
		return (int) Math.max(0, Math.min(minutes() - 1, (micros - this.startMicros) / MINUTE));
	}

	/** Start of the part of the run the flatness verdicts look at: after the first third. */
	long steadyFromMicros() {
		return this.startMicros + (this.endMicros - this.startMicros) / 3;
	}

	/** Tokens per µs of the plan. */
	double ratePerMicro() {
		return this.options.refillTokens() / (double) (this.options.refillPeriod().toNanos() / 1000);
	}

	/** How long a bucket's key lives at most after its last write, µs: capacity ÷ rate, rounded up to a second. */
	long keyTtlMicros() {
		return (long) Math.ceil(this.options.capacity() / ratePerMicro() / 1e6) * 1_000_000L;
	}

	/**
	 * The most keys Redis may hold at a sample.
	 * @param sample the sample
	 * @return fixed keys + keys per client × clients whose keys may still live
	 */
	long keyBound(Sample sample) {
		long since = sample.beforeMicros() - keyTtlMicros() - this.options.keySlack().toNanos() / 1000;
		long live = 0;
		for (SoakClient client : this.clients) {
			List<SoakClient.Response> responses = client.responses();
			if (!responses.isEmpty() && responses.get(0).sentMicros() <= sample.afterMicros()
					&& lastWriteBy(responses) >= since) {
				live++;
			}
		}
		return this.fixedKeys + this.options.keysPerClient() * live;
	}

	/**
	 * The latest a client's requests can have written its keys: a request is decided before it is answered, so its
	 * answer time; a request never answered may still be decided later (a gateway that resumes after a long pause),
	 * so {@link Long#MAX_VALUE}: that client counts until the end.
	 */
	private static long lastWriteBy(List<SoakClient.Response> responses) {
		long last = Long.MIN_VALUE;
		for (SoakClient.Response r : responses) {
			last = Math.max(last, (r.status() == SoakLoad.NO_ANSWER) ? Long.MAX_VALUE : r.answeredMicros());
		}
		return last;
	}

	/**
	 * Clients sending at a moment.
	 * @param micros the moment
	 * @return how many
	 */
	int activeAt(long micros) {
		int active = 0;
		for (SoakClient client : this.clients) {
			if (client.firstDueMicros() <= micros && client.stopMicros() > micros) {
				active++;
			}
		}
		return active;
	}

	/**
	 * The per-minute table's rows and every client-minute's check.
	 * @return one row per minute
	 */
	List<Minute> perMinute() {
		int n = minutes();
		Minute[] rows = new Minute[n];
		for (int m = 0; m < n; m++) {
			rows[m] = new Minute(m);
		}
		double rate = ratePerMicro();
		long capacity = this.options.capacity();
		for (SoakClient client : this.clients) {
			List<SoakClient.Response> responses = client.responses();
			if (responses.isEmpty()) {
				continue;
			}
			long first = responses.get(0).sentMicros();
			rows[minuteOf(first)].started++;
			if (!client.lastsToTheEnd()) {
				rows[minuteOf(client.stopMicros())].stopped++;
			}
			long maxRtt = 0;
			for (SoakClient.Response r : responses) {
				if (isAdmitted(r.status())) {
					maxRtt = Math.max(maxRtt, r.answeredMicros() - r.sentMicros());
				}
			}
			double allowed = capacity + rate * maxRtt + UpperBound.TOLERANCE;
			double[] worst = new double[n];
			boolean[] active = new boolean[n];
			int k = 0;
			double minE = Double.POSITIVE_INFINITY;
			double tokens = capacity;
			long last = first;
			for (SoakClient.Response r : responses) {
				int m = minuteOf(r.sentMicros());
				Minute row = rows[m];
				active[m] = true;
				row.sent++;
				int status = r.status();
				if (isAdmitted(status) && !r.shared()) {
					row.admitted++;
					row.fallbackAdmitted++;
				}
				else if (isAdmitted(status)) {
					row.admitted++;
					double e = k - rate * (r.sentMicros() - first);
					minE = Math.min(minE, e);
					worst[m] = Math.max(worst[m], e - minE + 1);
					k++;
				}
				else if (status == 429) {
					row.denied++;
				}
				else if (status >= 500 && status <= 599) {
					row.serverErrors++;
				}
				else if (status == SoakLoad.NO_ANSWER) {
					row.unanswered++;
				}
				else {
					row.other++;
				}
				if ((isAdmitted(status) || status == 429) && r.shared()) {
					tokens = Math.min(capacity, tokens + (r.sentMicros() - last) * rate);
					last = r.sentMicros();
					if (tokens + 1e-9 >= 1) {
						tokens -= 1;
						row.exact++;
					}
				}
			}
			for (int m = 0; m < n; m++) {
				if (active[m]) {
					rows[m].clientMinutes++;
					rows[m].worstExcess = Math.max(rows[m].worstExcess, worst[m]);
					if (worst[m] > allowed) {
						rows[m].violations++;
						rows[m].violationExamples.add(String.format(Locale.ROOT,
								"%s: %.3f admitted above rate × t (allowed %.3f: capacity %d + rate × longest round "
										+ "trip %.1f ms)",
								client.address(), worst[m], allowed, capacity, maxRtt / 1e3));
					}
				}
			}
		}
		List<Sample> samples = this.samples;
		Sample previous = null;
		for (Sample sample : samples) {
			Minute row = rows[minuteOf(sample.beforeMicros())];
			row.maxKeys = Math.max(row.maxKeys, sample.dbsize());
			row.keyBound = Math.max(row.keyBound, keyBound(sample));
			row.usedMemory = sample.usedMemory();
			row.load.add(sample.load1());
			for (int g = 0; g < sample.gateways().size(); g++) {
				SoakSampler.GatewaySample state = sample.gateways().get(g);
				row.threads(g, state.threads());
				row.fds(g, state.fds());
			}
			if (previous != null) {
				for (int g = 0; g < sample.gateways().size(); g++) {
					SoakSampler.GatewaySample now = sample.gateways().get(g);
					SoakSampler.GatewaySample then = previous.gateways().get(g);
					row.fallbacks += now.checks("local-fallback") - then.checks("local-fallback")
							+ now.checks("none") - then.checks("none");
					row.redisErrors += now.redisErrors() - then.redisErrors();
					row.cpuTicks += now.cpuTicks() - then.cpuTicks();
				}
			}
			previous = sample;
		}
		for (GcSample gc : this.gcSamples) {
			rows[minuteOf(gc.micros())].heap(gc.gateway(), gc.liveBytes());
		}
		return List.of(rows);
	}

	static boolean isAdmitted(int status) {
		return status >= 200 && status <= 299;
	}

	/**
	 * Least-squares slope of a gateway's heap after GC over the steady part, MB per hour.
	 * @param gateway which gateway
	 * @return the slope, NaN with fewer than 3 samples
	 */
	double heapSlopeMbPerHour(int gateway) {
		List<double[]> points = new ArrayList<>();
		for (GcSample gc : this.gcSamples) {
			if (gc.gateway() == gateway && gc.micros() >= steadyFromMicros()) {
				points.add(new double[] { (gc.micros() - this.startMicros) / 3.6e9, gc.liveBytes() / 1e6 });
			}
		}
		if (points.size() < 3) {
			return Double.NaN;
		}
		double mx = points.stream().mapToDouble((p) -> p[0]).average().orElse(0);
		double my = points.stream().mapToDouble((p) -> p[1]).average().orElse(0);
		double num = 0;
		double den = 0;
		for (double[] p : points) {
			num += (p[0] - mx) * (p[1] - my);
			den += (p[0] - mx) * (p[0] - mx);
		}
		return num / den;
	}

	/**
	 * Heap after GC of a gateway over the steady part: count, min, max, first, last (MB).
	 * @param gateway which gateway
	 * @return {count, min, max, first, last}
	 */
	double[] heapSummary(int gateway) {
		double min = Double.POSITIVE_INFINITY;
		double max = Double.NEGATIVE_INFINITY;
		double first = Double.NaN;
		double last = Double.NaN;
		int count = 0;
		for (GcSample gc : this.gcSamples) {
			if (gc.gateway() == gateway && gc.micros() >= steadyFromMicros()) {
				double mb = gc.liveBytes() / 1e6;
				min = Math.min(min, mb);
				max = Math.max(max, mb);
				if (count == 0) {
					first = mb;
				}
				last = mb;
				count++;
			}
		}
		return new double[] { count, min, max, first, last };
	}

	/**
	 * Range of a gateway's threads or fds over the steady part.
	 * @param gateway which gateway
	 * @param fds fds if true, else threads
	 * @return {min, max, first, last}
	 */
	int[] range(int gateway, boolean fds) {
		int min = Integer.MAX_VALUE;
		int max = Integer.MIN_VALUE;
		int first = -1;
		int last = -1;
		for (Sample sample : this.samples) {
			if (sample.beforeMicros() < steadyFromMicros()) {
				continue;
			}
			SoakSampler.GatewaySample state = sample.gateways().get(gateway);
			int v = fds ? state.fds() : state.threads();
			min = Math.min(min, v);
			max = Math.max(max, v);
			if (first < 0) {
				first = v;
			}
			last = v;
		}
		return new int[] { min, max, first, last };
	}

	/**
	 * The verdicts, in the report's order.
	 * @return one per claim of the issue
	 */
	List<Verdict> verdicts() {
		List<Verdict> verdicts = new ArrayList<>();
		int gateways = this.options.gateways().size();
		// heap
		boolean heapOk = true;
		StringBuilder heap = new StringBuilder();
		for (int g = 0; g < gateways; g++) {
			double slope = heapSlopeMbPerHour(g);
			double[] s = heapSummary(g);
			heapOk &= !Double.isNaN(slope) && slope <= this.options.heapSlopeMbPerHour();
			heap.append(String.format(Locale.ROOT, "%s%s: %+.2f MB/h (%d samples, %.1f-%.1f MB, first %.1f, last %.1f)",
					(g > 0) ? "; " : "", this.options.gateways().get(g).name(), slope, (int) s[0], s[1], s[2], s[3],
					s[4]));
		}
		verdicts.add(new Verdict("heap after GC flat",
				String.format(Locale.ROOT,
						"least-squares slope of the heap after a full GC over the last two thirds of the run <= %.1f MB/h, "
								+ "per gateway",
						this.options.heapSlopeMbPerHour()),
				heap.toString(), heapOk));
		// keys
		long worstOver = Long.MIN_VALUE;
		Sample worst = null;
		long maxKeys = 0;
		for (Sample sample : this.samples) {
			long bound = keyBound(sample);
			long over = sample.dbsize() - bound;
			maxKeys = Math.max(maxKeys, sample.dbsize());
			// the closest approach among samples with clients (before the first one, both are the fixed keys)
			if (over > worstOver && (bound > this.fixedKeys || over > 0)) {
				worstOver = over;
				worst = sample;
			}
		}
		long ttlSeconds = keyTtlMicros() / 1_000_000;
		String keyFigure = (worst == null) ? "no sample"
				: String.format(Locale.ROOT,
						"max DBSIZE %d (%d active clients x %d + %d fixed = %d); closest to the bound: %d keys at "
								+ "minute %.1f, bound %d there; %d keys %d s after the load stopped (fixed: %d)",
						maxKeys, this.options.clients(), this.options.keysPerClient(), this.fixedKeys,
						this.options.clients() * this.options.keysPerClient() + this.fixedKeys, worst.dbsize(),
						(worst.beforeMicros() - this.startMicros) / 6e7, keyBound(worst), this.drainedKeys,
						this.options.drain().toSeconds(), this.fixedKeys);
		verdicts.add(new Verdict("Redis keys bounded by the TTLs", String.format(Locale.ROOT,
				"every sample: DBSIZE <= fixed + %d x clients whose last request was answered less than TTL %d s + "
						+ "slack %d s before it (a client with an unanswered request counts to the end); and back to the fixed keys %d s after the load stopped",
				this.options.keysPerClient(), ttlSeconds, this.options.keySlack().toSeconds(),
				this.options.drain().toSeconds()), keyFigure,
				worst != null && worstOver <= 0 && this.drainedKeys <= this.fixedKeys));
		// threads and fds
		for (boolean fds : new boolean[] { false, true }) {
			int limit = fds ? this.options.fdRange() : this.options.threadRange();
			boolean ok = true;
			StringBuilder figure = new StringBuilder();
			for (int g = 0; g < gateways; g++) {
				int[] r = range(g, fds);
				ok &= r[1] - r[2] <= limit && r[3] - r[2] <= limit;
				figure.append(String.format(Locale.ROOT, "%s%s: first %d, max %d (+%d), last %d, min %d",
						(g > 0) ? "; " : "", this.options.gateways().get(g).name(), r[2], r[1], r[1] - r[2], r[3],
						r[0]));
			}
			verdicts.add(new Verdict(fds ? "file descriptors flat" : "threads flat", String.format(Locale.ROOT,
					"no growth over the last two thirds of the run: max - first sample <= %d, per gateway (a leak "
							+ "grows; a fall is reported, not failed)",
					limit), figure.toString(), ok));
		}
		// statuses
		List<Minute> rows = perMinute();
		long sent = rows.stream().mapToLong((r) -> r.sent).sum();
		long admitted = rows.stream().mapToLong((r) -> r.admitted).sum();
		long denied = rows.stream().mapToLong((r) -> r.denied).sum();
		long serverErrors = rows.stream().mapToLong((r) -> r.serverErrors).sum();
		long unanswered = rows.stream().mapToLong((r) -> r.unanswered).sum();
		long other = rows.stream().mapToLong((r) -> r.other).sum();
		verdicts.add(new Verdict("zero 5xx", "no 5xx answer (and no status but 2xx and 429)",
				String.format(Locale.ROOT, "%,d sent: %,d admitted (2xx), %,d denied (429), %d 5xx, %d other",
						sent, admitted, denied, serverErrors, other),
				serverErrors == 0 && other == 0));
		String unansweredWhen = "";
		if (unanswered > 0) {
			long first = Long.MAX_VALUE;
			long last = Long.MIN_VALUE;
			int[] byGateway = new int[gateways];
			for (SoakClient client : this.clients) {
				for (SoakClient.Response r : client.responses()) {
					if (r.status() == SoakLoad.NO_ANSWER) {
						first = Math.min(first, r.sentMicros());
						last = Math.max(last, r.sentMicros());
						byGateway[r.instance()]++;
					}
				}
			}
			StringBuilder split = new StringBuilder();
			for (int g = 0; g < gateways; g++) {
				split.append((g > 0) ? ", " : "").append(byGateway[g]).append(" to ")
					.append(this.options.gateways().get(g).name());
			}
			unansweredWhen = String.format(Locale.ROOT, ", all sent between minute %.2f and %.2f (%s)",
					(first - this.startMicros) / 6e7, (last - this.startMicros) / 6e7, split);
		}
		verdicts.add(new Verdict("every request answered",
				String.format(Locale.ROOT, "no request without an answer within %d s", this.options.requestTimeout().toSeconds()),
				String.format(Locale.ROOT, "%d unanswered%s", unanswered, unansweredWhen), unanswered == 0));
		long clientMinutes = rows.stream().mapToLong((r) -> r.clientMinutes).sum();
		long violations = rows.stream().mapToLong((r) -> r.violations).sum();
		double worstExcess = rows.stream().mapToDouble((r) -> r.worstExcess).max().orElse(0);
		double fallbacks = rows.stream().mapToDouble((r) -> r.fallbacks).sum();
		long fallbackAdmitted = rows.stream().mapToLong((r) -> r.fallbackAdmitted).sum();
		verdicts.add(new Verdict("admitted within the accuracy report's bound every minute", String.format(
				Locale.ROOT,
				"every client-minute: admitted by the shared limiter in any interval ending in it <= capacity %d + "
						+ "rate x its length (+ rate x the client's longest round trip)",
				this.options.capacity()),
				String.format(Locale.ROOT,
						"%,d client-minutes, %d over; largest excess %.3f tokens over rate x t (capacity %d); %.0f "
								+ "checks fell back (local fallback), %,d of them admitted (not held to the bound)",
						clientMinutes, violations, worstExcess, this.options.capacity(), fallbacks, fallbackAdmitted),
				violations == 0));
		return verdicts;
	}

	/**
	 * One claim of the issue and what the run found.
	 * @param name the claim
	 * @param rule how it is decided
	 * @param figure what was measured
	 * @param holds whether it held
	 */
	record Verdict(String name, String rule, String figure, boolean holds) {
	}

	/** One minute of the run. */
	static final class Minute {

		final int index;

		long sent;

		long admitted;

		long denied;

		long serverErrors;

		long unanswered;

		long other;

		long exact;

		long fallbackAdmitted;

		int started;

		int stopped;

		int clientMinutes;

		int violations;

		double worstExcess;

		final List<String> violationExamples = new ArrayList<>();

		long maxKeys;

		long keyBound;

		long usedMemory;

		double fallbacks;

		double redisErrors;

		long cpuTicks;

		final List<Double> load = new ArrayList<>();

		final double[] heapMb = { Double.NaN, Double.NaN, Double.NaN, Double.NaN };

		final int[] maxThreads = new int[4];

		final int[] maxFds = new int[4];

		Minute(int index) {
			this.index = index;
		}

		void heap(int gateway, double bytes) {
			this.heapMb[gateway] = bytes / 1e6;
		}

		void threads(int gateway, int threads) {
			this.maxThreads[gateway] = Math.max(this.maxThreads[gateway], threads);
		}

		void fds(int gateway, int fds) {
			this.maxFds[gateway] = Math.max(this.maxFds[gateway], fds);
		}

		double meanLoad() {
			return this.load.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
		}

	}

}
