package io.github.ratelimit.gateway.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every command the shipped Lua scripts call is in {@link RedisAccessProbe#COMMANDS}, the list behind the minimal
 * ACL rule of the operations guide and the start-up WARN: a command missing there would fail every check of an ACL
 * user granted exactly that rule.
 */
class ScriptCommandsTest {

	private static final Pattern CALL = Pattern.compile("redis\\.p?call\\('([A-Za-z]+)'");

	@Test
	void everyCommandTheScriptsCallIsInTheMinimalRule() throws IOException {
		Set<String> called = new TreeSet<>();
		List<String> scripts = new ArrayList<>(LuaScript.RATE_LIMIT_SOURCES);
		scripts.add("META-INF/ratelimit/instances.lua");
		for (String script : scripts) {
			Matcher calls = CALL.matcher(read(script));
			while (calls.find()) {
				called.add(calls.group(1).toLowerCase(Locale.ROOT));
			}
		}
		assertThat(called).contains("time", "zscore", "zrangebyscore");
		assertThat(RedisAccessProbe.COMMANDS).containsAll(called);
	}

	private static String read(String location) throws IOException {
		try (InputStream in = ScriptCommandsTest.class.getClassLoader().getResourceAsStream(location)) {
			assertThat(in).as(location).isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}
