package io.github.ratelimit.benchmarks;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/** What one measured run observed: answers, decisions by source, and the latency histogram (nanoseconds). */
final class LoopResult {

	final Histogram latency = new ConcurrentHistogram(3);

	final LongAdder completed = new LongAdder();

	final LongAdder allowed = new LongAdder();

	final LongAdder errors = new LongAdder();

	final Map<String, LongAdder> sources = new ConcurrentHashMap<>();

	volatile Throwable firstError;

	double seconds;

	void record(long nanos, boolean isAllowed, String source) {
		this.latency.recordValue(Math.max(0, nanos));
		this.completed.increment();
		if (isAllowed) {
			this.allowed.increment();
		}
		this.sources.computeIfAbsent(source, (s) -> new LongAdder()).increment();
	}

	void recordError(long nanos, Throwable error) {
		this.latency.recordValue(Math.max(0, nanos));
		this.completed.increment();
		this.errors.increment();
		if (this.firstError == null) {
			this.firstError = error;
		}
	}

	/**
	 * Checks per second decided by the limiter proper: by Redis ({@code SHARED}) or by the starter's over-limit
	 * cache ({@code CACHED}); answers of a local fallback and errors are not counted.
	 */
	double perSecond() {
		return decided() / this.seconds;
	}

	long decided() {
		return count("SHARED") + count("CACHED");
	}

	/** Answers not decided by the limiter proper: errors, local fallback, unchecked. */
	long undecided() {
		return this.completed.sum() - decided();
	}

	private long count(String source) {
		LongAdder adder = this.sources.get(source);
		return (adder != null) ? adder.sum() : 0;
	}

	double allowedPercent() {
		long n = this.completed.sum();
		return (n == 0) ? 0 : 100.0 * this.allowed.sum() / n;
	}

	/** Microseconds at a percentile. */
	double micros(double percentile) {
		return this.latency.getValueAtPercentile(percentile) / 1000.0;
	}

	double maxMicros() {
		return this.latency.getMaxValue() / 1000.0;
	}

	/** Decisions by source, e.g. {@code SHARED=20000;CACHED=5}. */
	String sourcesText() {
		Map<String, Long> sorted = new TreeMap<>();
		this.sources.forEach((k, v) -> sorted.put(k, v.sum()));
		StringBuilder text = new StringBuilder();
		sorted.forEach((k, v) -> text.append(text.isEmpty() ? "" : ";").append(k).append('=').append(v));
		return text.isEmpty() ? "-" : text.toString();
	}

}
