package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A Lua script as a {@link RedisScriptExecutor} runs it: its text and SHA-1, read once. (Spring Data's
 * {@link RedisScript} over a class path resource re-reads the file's modification time and takes a lock on every
 * {@code getSha1()}.)
 */
public final class LuaScript {

	private final String text;

	private final byte[] utf8;

	private final RedisScript<List<Object>> redisScript;

	private final String sha1;

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private LuaScript(String text) {
		this.text = text;
		this.utf8 = text.getBytes(StandardCharsets.UTF_8);
		this.redisScript = (RedisScript) RedisScript.of(text, List.class);
		this.sha1 = this.redisScript.getSha1();
	}

	/**
	 * The script of a Spring Data {@link RedisScript}, its text read now.
	 * @param script the script (e.g. the {@code rateLimitScript} bean)
	 * @return the script, held in memory
	 */
	public static LuaScript of(RedisScript<?> script) {
		return new LuaScript(script.getScriptAsString());
	}

	/**
	 * A script on the class path.
	 * @param location the class path location (e.g. {@value RedisRateLimitStore#SCRIPT_LOCATION})
	 * @return the script, held in memory
	 * @throws org.springframework.data.redis.core.script.ScriptingException if the resource cannot be read
	 */
	public static LuaScript fromClassPath(String location) {
		return of(RedisScript.of(new ClassPathResource(location)));
	}

	/**
	 * The SHA-1 digest of the text, what {@code EVALSHA} takes.
	 * @return 40 lower-case hex digits
	 */
	public String sha1() {
		return this.sha1;
	}

	/**
	 * The script's text, what {@code EVAL} takes.
	 * @return the Lua source
	 */
	public String text() {
		return this.text;
	}

	/**
	 * The same script as Spring Data's {@link RedisScript} with a list reply, for executors built on Spring Data
	 * Redis: its text held in memory, so no modification check per call.
	 * @return the script, one instance per {@code LuaScript}
	 */
	public RedisScript<List<Object>> asRedisScript() {
		return this.redisScript;
	}

	/** The text in UTF-8, shared: not to be modified. */
	byte[] utf8() {
		return this.utf8;
	}

	@Override
	public String toString() {
		return "LuaScript[sha1=" + this.sha1 + "]";
	}

}
