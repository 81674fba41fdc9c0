package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordingFile;

/**
 * The execution samples of a JFR recording of the route comparison's gateway over one wrk window, counted the way
 * {@code src/docs/reports/request-thread/profile.md} counts them: by the package group of the leaf frame (the code
 * running when sampled), and by the innermost starter frame (the starter's method nearest the leaf). The report
 * turns counts into microseconds per request: a count's share of the window's samples × the gateway's CPU time per
 * request over the window.
 */
final class GatewayProfile {

	/** One row per profiled window ({@code routes-profile.tsv}). */
	static final List<String> WINDOW_HEADER = List.of("route", "distribution", "keys", "connections", "seconds",
			"req_per_s", "p99_us", "requests", "non2xx", "cpu_us_per_req", "compiler_ms", "samples", "starter_samples",
			"jfr");

	/** Samples per route and leaf group ({@code routes-profile-groups.tsv}). */
	static final List<String> GROUP_HEADER = List.of("route", "group", "samples");

	/** Samples per route and innermost starter frame ({@code routes-profile-frames.tsv}). */
	static final List<String> FRAME_HEADER = List.of("route", "frame", "samples");

	/** The package of the starter's classes. */
	static final String STARTER = "io.github.ratelimit.";

	/** The package of this harness (the benchmark gateway's resolvers), inside {@link #STARTER}'s but not the starter. */
	static final String HARNESS = "io.github.ratelimit.benchmarks.";

	/** Leaf groups: the first whose prefix a class name starts with; none: {@link #OTHER}. */
	private static final String[][] GROUPS = { { HARNESS, "io.github.ratelimit.benchmarks.* (BenchGateway)" },
			{ STARTER, "io.github.ratelimit.*" }, { "java.", "java.*" }, { "jdk.", "jdk.*" }, { "sun.", "sun.*" },
			{ "reactor.", "reactor.*" }, { "io.netty.", "io.netty.*" }, { "io.lettuce.", "io.lettuce.*" },
			{ "org.springframework.cloud.gateway.", "org.springframework.cloud.gateway.*" },
			{ "org.springframework.", "org.springframework.*" } };

	/** The group of classes no other group takes, and of frames without a method. */
	static final String OTHER = "other";

	/**
	 * The samples of one window.
	 * @param samples execution samples (threads running Java code) inside the window
	 * @param starterSamples of those, samples with a starter frame anywhere on the stack
	 * @param byGroup samples by leaf group ({@link #group})
	 * @param byStarterFrame samples with a starter frame, by their innermost one ({@link #frameName})
	 */
	record Samples(long samples, long starterSamples, Map<String, Long> byGroup, Map<String, Long> byStarterFrame) {
	}

	private GatewayProfile() {
	}

	/**
	 * Count the {@code jdk.ExecutionSample} events of a recording that started inside a window.
	 * @param recording the JFR file
	 * @param from the window's start (inclusive)
	 * @param to the window's end (exclusive)
	 * @return the counts; no event in the window: all zero
	 * @throws IOException if the file cannot be read as a recording
	 */
	static Samples read(Path recording, Instant from, Instant to) throws IOException {
		long samples = 0;
		long starterSamples = 0;
		Map<String, Long> byGroup = new HashMap<>();
		Map<String, Long> byStarterFrame = new HashMap<>();
		try (RecordingFile file = new RecordingFile(recording)) {
			while (file.hasMoreEvents()) {
				RecordedEvent event = file.readEvent();
				if (!event.getEventType().getName().equals("jdk.ExecutionSample")
						|| event.getStartTime().isBefore(from) || !event.getStartTime().isBefore(to)
						|| event.getStackTrace() == null || event.getStackTrace().getFrames().isEmpty()) {
					continue;
				}
				List<RecordedFrame> frames = event.getStackTrace().getFrames();
				samples++;
				byGroup.merge(group(className(frames.get(0))), 1L, Long::sum);
				for (RecordedFrame frame : frames) {
					if (isStarter(className(frame))) {
						starterSamples++;
						byStarterFrame.merge(frameName(frame), 1L, Long::sum);
						break;
					}
				}
			}
		}
		return new Samples(samples, starterSamples, Map.copyOf(byGroup), Map.copyOf(byStarterFrame));
	}

	/**
	 * The leaf group of a class.
	 * @param className e.g. {@code reactor.core.publisher.MonoDefer}; empty for a frame without a method
	 * @return e.g. {@code reactor.*}; {@link #OTHER} for an empty name or a package of no group
	 */
	static String group(String className) {
		if (!className.isEmpty()) {
			for (String[] group : GROUPS) {
				if (className.startsWith(group[0])) {
					return group[1];
				}
			}
		}
		return OTHER;
	}

	/**
	 * Whether a class is the starter's (this harness' classes are not).
	 * @param className a class name
	 * @return true for {@code io.github.ratelimit.*} outside {@code io.github.ratelimit.benchmarks.*}
	 */
	static boolean isStarter(String className) {
		return className.startsWith(STARTER) && !className.startsWith(HARNESS);
	}

	/**
	 * A frame's method as the report names it: class and method, a lambda's generated class reduced to
	 * {@code Outer$$Lambda} (its number and address differ from run to run).
	 * @param frame a frame
	 * @return e.g. {@code io.github.ratelimit.gateway.route.RateLimitOutcome$$Lambda.accept}; {@code ?} without a
	 * method
	 */
	static String frameName(RecordedFrame frame) {
		RecordedMethod method = frame.getMethod();
		return (method == null) ? "?" : methodName(className(frame), method.getName());
	}

	/**
	 * A method's name as the report gives it.
	 * @param className the class name as JFR records it, e.g. {@code a.B$$Lambda$1516+0x00007fe100742ae0.1356618853}
	 * @param method the method's name
	 * @return e.g. {@code a.B$$Lambda.accept}
	 */
	static String methodName(String className, String method) {
		int lambda = className.indexOf("$$Lambda");
		String type = (lambda < 0) ? className : className.substring(0, lambda + "$$Lambda".length());
		return type + "." + method;
	}

	private static String className(RecordedFrame frame) {
		RecordedMethod method = frame.getMethod();
		return (method == null || method.getType() == null) ? "" : method.getType().getName();
	}

}
