package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the CPU time of a JFR recording goes, from its {@code jdk.ExecutionSample} events (threads running Java
 * code): samples by thread, by component (the top frame's library, JDK frames charged to their nearest non-JDK
 * caller), the share of samples with a component anywhere on the stack, and the hottest methods. Written as
 * markdown for the report.
 */
final class JfrSummary {

	private static final String[][] COMPONENTS = { { "io.github.ratelimit.benchmarks.", "benchmark harness" },
			{ "org.HdrHistogram.", "benchmark harness" }, { "io.github.ratelimit.", "starter (io.github.ratelimit)" },
			{ "io.lettuce.", "Lettuce" }, { "io.netty.", "Netty" }, { "reactor.netty.", "Reactor Netty" },
			{ "reactor.", "Reactor Core" }, { "org.springframework.data.redis.", "Spring Data Redis" },
			{ "org.springframework.cloud.gateway.", "Spring Cloud Gateway" },
			{ "org.springframework.web.", "Spring WebFlux" }, { "org.springframework.http.", "Spring WebFlux" },
			{ "org.springframework.", "Spring (other)" }, { "io.github.resilience4j.", "Resilience4j" },
			{ "com.github.benmanes.caffeine.", "Caffeine" }, { "io.micrometer.", "Micrometer" },
			{ "io.github.bucket4j.", "Bucket4j" }, { "ch.qos.logback.", "Logback" }, { "org.slf4j.", "Logback" } };

	/**
	 * Frames worth naming: a sample counts for a label when any frame of its stack is that method. Chosen from what
	 * a rate limit check may do besides its Redis round trip.
	 */
	private static final String[][] NAMED_FRAMES = {
			{ "org.springframework.scripting.support.ResourceScriptSource.isModified",
					"script source re-checked for modification (file stat + URI parsing) on every call" },
			{ "org.springframework.data.redis.core.script.DefaultRedisScript.getSha1", "script SHA look-up (synchronized)" },
			{ "reactor.core.scheduler.Schedulers.directSchedule", "timeout timer scheduled (Reactor parallel scheduler)" },
			{ "reactor.core.scheduler.SchedulerTask.dispose", "timeout timer cancelled" },
			{ "io.github.resilience4j.circuitbreaker.internal.", "circuit breaker state machine (permission, outcome)" },
			{ "io.micrometer.", "Micrometer meters" },
			{ "io.github.ratelimit.gateway.chain.OverLimitCache", "over-limit cache" },
			{ "io.github.ratelimit.gateway.chain.LocalFallbackLimiter", "local fallback limiter (Redis too slow)" },
			{ "io.github.ratelimit.gateway.key.", "client key resolution (API key hash, IP)" },
			{ "io.github.ratelimit.gateway.http.", "RateLimit header fields" },
			{ "io.lettuce.core.protocol.CommandEncoder", "Lettuce command encoding" },
			{ "io.lettuce.core.protocol.RedisStateMachine", "Lettuce reply decoding" },
			{ "ch.qos.logback.", "logging" } };

	private JfrSummary() {
	}

	/**
	 * Summarise a recording.
	 * @param recording the JFR file
	 * @param title heading of the summary
	 * @param since only events from this instant on (the steady part of the recording), or {@code null} for all
	 * @return markdown
	 */
	static String summarize(Path recording, String title, java.time.Instant since) throws IOException {
		Map<String, Long> byThread = new HashMap<>();
		Map<String, Map<String, Long>> componentsByThread = new HashMap<>();
		Map<String, Long> byComponent = new HashMap<>();
		Map<String, Long> onStack = new HashMap<>();
		Map<String, Long> topMethods = new HashMap<>();
		Map<String, Long> starterMethods = new HashMap<>();
		Map<String, Long> named = new HashMap<>();
		long samples = 0;
		long nativeSamples = 0;
		Map<String, Long> nativeTop = new HashMap<>();
		for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
			if (since != null && event.getStartTime().isBefore(since)) {
				continue;
			}
			String type = event.getEventType().getName();
			RecordedStackTrace stack = event.getStackTrace();
			if (stack == null || stack.getFrames().isEmpty()) {
				continue;
			}
			List<RecordedFrame> frames = stack.getFrames();
			if (type.equals("jdk.NativeMethodSample")) {
				nativeSamples++;
				nativeTop.merge(method(frames.get(0)), 1L, Long::sum);
				continue;
			}
			if (!type.equals("jdk.ExecutionSample")) {
				continue;
			}
			samples++;
			String thread = event.getThread("sampledThread") != null
					? event.getThread("sampledThread").getJavaName() : "?";
			byThread.merge(threadGroup(thread), 1L, Long::sum);
			topMethods.merge(method(frames.get(0)), 1L, Long::sum);
			String charged = null;
			for (RecordedFrame frame : frames) {
				String component = component(className(frame));
				if (component != null) {
					charged = component;
					break;
				}
			}
			byComponent.merge((charged != null) ? charged : "JDK only", 1L, Long::sum);
			componentsByThread.computeIfAbsent(threadGroup(thread), (t) -> new HashMap<>())
				.merge((charged != null) ? charged : "JDK only", 1L, Long::sum);
			Map<String, Boolean> seen = new HashMap<>();
			for (RecordedFrame frame : frames) {
				String qualified = className(frame) + "." + ((frame.getMethod() != null) ? frame.getMethod().getName() : "");
				for (String[] namedFrame : NAMED_FRAMES) {
					if (qualified.startsWith(namedFrame[0]) && seen.putIfAbsent("n:" + namedFrame[1], true) == null) {
						named.merge(namedFrame[1], 1L, Long::sum);
					}
				}
				String component = component(className(frame));
				if (component != null && seen.putIfAbsent(component, true) == null) {
					onStack.merge(component, 1L, Long::sum);
				}
				if (className(frame).startsWith("io.github.ratelimit.gateway.")
						&& seen.putIfAbsent("m:" + method(frame), true) == null) {
					starterMethods.merge(method(frame), 1L, Long::sum);
				}
			}
		}
		StringBuilder md = new StringBuilder();
		md.append("#### ").append(title).append("\n\n");
		md.append(String.format(Locale.ROOT,
				"%,d execution samples (threads running Java code; %,d native-method samples not counted below).%n%n",
				samples, nativeSamples));
		md.append(table("Samples by thread", byThread, samples, 8));
		md.append(table("Self time by component (JDK frames charged to their nearest non-JDK caller)", byComponent,
				samples, 20));
		List<Map.Entry<String, Long>> threads = new ArrayList<>(byThread.entrySet());
		threads.sort(Map.Entry.<String, Long>comparingByValue().reversed());
		for (Map.Entry<String, Long> thread : threads.subList(0, Math.min(2, threads.size()))) {
			md.append(table("Self time by component, thread `" + thread.getKey() + "` only",
					componentsByThread.get(thread.getKey()), thread.getValue(), 10));
		}
		md.append(table("Samples with the component anywhere on the stack (inclusive)", onStack, samples, 20));
		md.append(table("Named work anywhere on the stack (inclusive; the reactive chain runs nested, so only leaf-like work is named)", named, samples, 20));
		md.append(table("Hottest methods (self, top frame)", topMethods, samples, 20));
		md.append(table("Starter methods on the stack (inclusive)", starterMethods, samples, 15));
		if (nativeSamples > 0) {
			md.append(table("Native-method samples (top frame)", nativeTop, nativeSamples, 5));
		}
		return md.toString();
	}

	private static String table(String title, Map<String, Long> counts, long total, int limit) {
		if (counts.isEmpty() || total == 0) {
			return "";
		}
		List<Map.Entry<String, Long>> entries = new ArrayList<>(counts.entrySet());
		entries.sort(Map.Entry.<String, Long>comparingByValue().reversed());
		StringBuilder md = new StringBuilder();
		md.append("| ").append(title).append(" | samples | share |\n|---|---:|---:|\n");
		for (Map.Entry<String, Long> e : entries.subList(0, Math.min(limit, entries.size()))) {
			md.append(String.format(Locale.ROOT, "| `%s` | %,d | %.1f%% |%n", e.getKey().replace("|", "\\|"),
					e.getValue(), 100.0 * e.getValue() / total));
		}
		return md.append('\n').toString();
	}

	private static String className(RecordedFrame frame) {
		return (frame.getMethod() == null || frame.getMethod().getType() == null) ? ""
				: frame.getMethod().getType().getName();
	}

	private static String method(RecordedFrame frame) {
		if (frame.getMethod() == null) {
			return "?";
		}
		String cls = className(frame);
		return cls.substring(cls.lastIndexOf('.') + 1) + "." + frame.getMethod().getName() + " ("
				+ packageOf(cls) + ")";
	}

	private static String packageOf(String cls) {
		int dot = cls.lastIndexOf('.');
		return (dot < 0) ? "" : cls.substring(0, dot);
	}

	static String component(String cls) {
		for (String[] component : COMPONENTS) {
			if (cls.startsWith(component[0])) {
				return component[1];
			}
		}
		if (cls.startsWith("java.") || cls.startsWith("jdk.") || cls.startsWith("sun.") || cls.isEmpty()) {
			return null;
		}
		return "other libraries";
	}

	private static String threadGroup(String thread) {
		return thread.replaceAll("\\d+", "N");
	}

}
