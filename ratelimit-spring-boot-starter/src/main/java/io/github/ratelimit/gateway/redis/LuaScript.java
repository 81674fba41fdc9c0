package io.github.ratelimit.gateway.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A Lua script as a {@link RedisScriptExecutor} runs it: its text and SHA-1, read once and held in memory; and the
 * rate limit script, joined from its files ({@link #rateLimit()}).
 */
public final class LuaScript {

	/** Class path folder of the rate limit script's source files. */
	public static final String RATE_LIMIT_FOLDER = "META-INF/ratelimit/rate_limit/";

	/**
	 * The rate limit script's source files (class path locations), in the order they are joined into one script: the
	 * shared helpers, one file per algorithm, then the dispatcher, whose header is the script's contract.
	 */
	public static final List<String> RATE_LIMIT_SOURCES = List.of(RATE_LIMIT_FOLDER + "common.lua",
			RATE_LIMIT_FOLDER + "token_bucket.lua", RATE_LIMIT_FOLDER + "sliding_window_log.lua",
			RATE_LIMIT_FOLDER + "sliding_window_counter.lua", RATE_LIMIT_FOLDER + "fixed_window.lua",
			RATE_LIMIT_FOLDER + "concurrency.lua", RATE_LIMIT_FOLDER + "quota.lua",
			RATE_LIMIT_FOLDER + "dispatch.lua");

	private final String text;

	private final byte[] utf8;

	private final RedisScript<List<Object>> redisScript;

	private final String sha1;

	private final boolean runsBatches;

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private LuaScript(String text) {
		this.text = text;
		this.utf8 = text.getBytes(StandardCharsets.UTF_8);
		this.redisScript = (RedisScript) RedisScript.of(text, List.class);
		this.sha1 = this.redisScript.getSha1();
		this.runsBatches = this.sha1.equals(Shipped.RATE_LIMIT_SHA1);
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
	 * A script on the class path, from one file or several joined in the given order (their texts concatenated as
	 * they are).
	 * @param locations the class path locations (e.g. {@link #RATE_LIMIT_SOURCES})
	 * @return the script, held in memory
	 * @throws UncheckedIOException if a resource cannot be read
	 */
	public static LuaScript fromClassPath(String... locations) {
		return new LuaScript(joined(locations));
	}

	private static String joined(String... locations) {
		StringBuilder text = new StringBuilder();
		for (String location : locations) {
			try {
				text.append(new ClassPathResource(location).getContentAsString(StandardCharsets.UTF_8));
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot read the Lua script " + location, ex);
			}
		}
		return text.toString();
	}

	/**
	 * The rate limit script: every algorithm, check, lease, refund and slot release; its files
	 * ({@link #RATE_LIMIT_SOURCES}) read now and joined.
	 * @return the script, held in memory
	 * @throws UncheckedIOException if a file cannot be read
	 */
	public static LuaScript rateLimit() {
		return fromClassPath(RATE_LIMIT_SOURCES.toArray(String[]::new));
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

	/**
	 * Whether this is the rate limit script the starter ships ({@link #rateLimit()}), which also runs several calls
	 * in one script run (its {@code 'batch'} operation, see {@code dispatch.lua}).
	 * @return whether calls of this script can be batched
	 */
	public boolean runsBatches() {
		return this.runsBatches;
	}

	/** The text in UTF-8, shared: not to be modified. */
	byte[] utf8() {
		return this.utf8;
	}

	@Override
	public String toString() {
		return "LuaScript[sha1=" + this.sha1 + "]";
	}

	/** The digest of the shipped rate limit script, read once on first use. */
	private static final class Shipped {

		static final String RATE_LIMIT_SHA1 = RedisScript.of(joined(RATE_LIMIT_SOURCES.toArray(String[]::new)))
			.getSha1();

	}

}
