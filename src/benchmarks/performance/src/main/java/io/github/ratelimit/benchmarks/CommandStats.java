package io.github.ratelimit.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Calls per command from Redis' {@code INFO commandstats}. */
final class CommandStats {

	private static final Pattern LINE = Pattern.compile("^cmdstat_([a-z_|]+):calls=(\\d+)", Pattern.MULTILINE);

	private CommandStats() {
	}

	/**
	 * Parse {@code INFO commandstats}.
	 * @param info the INFO text
	 * @return calls by command name (lower case, e.g. {@code evalsha})
	 */
	static Map<String, Long> parse(String info) {
		Map<String, Long> calls = new LinkedHashMap<>();
		Matcher matcher = LINE.matcher(info);
		while (matcher.find()) {
			calls.put(matcher.group(1), Long.parseLong(matcher.group(2)));
		}
		return calls;
	}

	/** Calls of EVALSHA and EVAL (the rate limit scripts). */
	static long scriptCalls(Map<String, Long> calls) {
		return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
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
