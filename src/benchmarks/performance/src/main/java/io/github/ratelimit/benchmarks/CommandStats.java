package io.github.ratelimit.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Calls per command, and the time Redis spent executing them, from Redis' {@code INFO commandstats} (lines such as
 * {@code cmdstat_evalsha:calls=120,usec=2400,usec_per_call=20.00,...}).
 */
final class CommandStats {

	private static final Pattern LINE = Pattern.compile("^cmdstat_([a-z_|]+):calls=(\\d+),usec=(\\d+)",
			Pattern.MULTILINE);

	private CommandStats() {
	}

	/**
	 * Parse the calls of {@code INFO commandstats}.
	 * @param info the INFO text
	 * @return calls by command name (lower case, e.g. {@code evalsha})
	 */
	static Map<String, Long> parse(String info) {
		return column(info, 2);
	}

	/**
	 * Parse the execution times of {@code INFO commandstats}: per command, the {@code usec} Redis has spent in it
	 * since its start or the last {@code CONFIG RESETSTAT} (wall time on Redis' main thread around the command's
	 * execution, preemption included; for EVALSHA and EVAL the whole script, the commands it calls included, which also count in their
	 * own lines).
	 * @param info the INFO text
	 * @return microseconds by command name (lower case, e.g. {@code evalsha})
	 */
	static Map<String, Long> micros(String info) {
		return column(info, 3);
	}

	private static Map<String, Long> column(String info, int group) {
		Map<String, Long> values = new LinkedHashMap<>();
		Matcher matcher = LINE.matcher(info);
		while (matcher.find()) {
			values.put(matcher.group(1), Long.parseLong(matcher.group(group)));
		}
		return values;
	}

	/**
	 * Calls of EVALSHA and EVAL (the rate limit scripts).
	 * @param calls from {@link #parse}
	 * @return their sum
	 */
	static long scriptCalls(Map<String, Long> calls) {
		return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
	}

	/**
	 * Time Redis has spent executing EVALSHA and EVAL (the rate limit scripts).
	 * @param micros from {@link #micros}
	 * @return their sum, microseconds
	 */
	static long scriptMicros(Map<String, Long> micros) {
		return micros.getOrDefault("evalsha", 0L) + micros.getOrDefault("eval", 0L);
	}

	/** Calls of every command except INFO (the measurement itself). */
	static long allCalls(Map<String, Long> calls) {
		return calls.entrySet()
			.stream()
			.filter((e) -> !e.getKey().equals("info"))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

}
