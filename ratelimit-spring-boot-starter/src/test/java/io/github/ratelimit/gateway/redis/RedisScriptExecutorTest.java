package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Both {@link RedisScriptExecutor}s against a real Redis, held to the same contract: array and integer replies as
 * lists of {@link Long}, EVAL when Redis answers NOSCRIPT, an error reply as a failed future, DEL counting the keys
 * that existed.
 */
class RedisScriptExecutorTest {

	private static final TestRedis testRedis = TestRedis.shared();

	private static LettuceConnectionFactory connectionFactory;

	private static LettuceScriptExecutor lettuce;

	private static SpringDataScriptExecutor springData;

	@BeforeAll
	static void connect() {
		connectionFactory = StartedConnectionFactory.to(testRedis.host(), testRedis.port());
		lettuce = new LettuceScriptExecutor(connectionFactory);
		springData = new SpringDataScriptExecutor(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		if (lettuce != null) {
			lettuce.close();
		}
		if (connectionFactory != null) {
			connectionFactory.destroy();
		}
	}

	@BeforeEach
	void flush() {
		testRedis.flushAll(); // also SCRIPT FLUSH: every first EVALSHA is NOSCRIPT
	}

	private static RedisScriptExecutor executor(String kind) {
		return "lettuce".equals(kind) ? lettuce : springData;
	}

	private static LuaScript script(String text) {
		return LuaScript.of(RedisScript.of(text, List.class));
	}

	private static byte[][] bytes(String... values) {
		byte[][] result = new byte[values.length][];
		for (int i = 0; i < values.length; i++) {
			result[i] = values[i].getBytes(StandardCharsets.UTF_8);
		}
		return result;
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "spring-data" })
	void anArrayReplyIsAListOfLongsAndTheScriptIsLoadedOnNoscript(String kind) throws Exception {
		LuaScript script = script("redis.call('SET', KEYS[1], ARGV[1]) return { 1, tonumber(ARGV[2]) }");
		assertThat(testRedis.command("SCRIPT", "EXISTS", script.sha1())).isEqualTo("0");
		List<Object> reply = executor(kind).eval(script, bytes("x:1"), bytes("v", "42")).get(30, TimeUnit.SECONDS);
		assertThat(reply).containsExactly(1L, 42L);
		assertThat(testRedis.command("SCRIPT", "EXISTS", script.sha1())).isEqualTo("1");
		assertThat(testRedis.command("GET", "x:1")).isEqualTo("v");
		// loaded now: EVALSHA alone
		assertThat(executor(kind).eval(script, bytes("x:1"), bytes("w", "7")).get(30, TimeUnit.SECONDS))
			.containsExactly(1L, 7L);
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "spring-data" })
	void anIntegerReplyIsAListOfThatOneLong(String kind) throws Exception {
		assertThat(executor(kind).eval(script("return 3"), new byte[0][], new byte[0][]).get(30, TimeUnit.SECONDS))
			.containsExactly(3L);
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "spring-data" })
	void anErrorReplyFailsTheFuture(String kind) {
		LuaScript script = script("return redis.error_reply('ERR no such limit')");
		assertThatThrownBy(() -> executor(kind).eval(script, new byte[0][], new byte[0][]).get(30, TimeUnit.SECONDS))
			.isInstanceOf(ExecutionException.class)
			.hasStackTraceContaining("no such limit");
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "spring-data" })
	void deleteCountsTheKeysThatExisted(String kind) throws Exception {
		testRedis.command("SET", "{d}:1", "a");
		testRedis.command("SET", "{d}:2", "b");
		assertThat(executor(kind).delete(bytes("{d}:1", "{d}:2", "{d}:3")).get(30, TimeUnit.SECONDS)).isEqualTo(2);
		assertThat(testRedis.command("EXISTS", "{d}:1")).isEqualTo("0");
	}

}
