package io.github.ratelimit.accuracy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Plain Redis commands for the harness (flush, INFO, MEMORY USAGE, EVALSHA), over one Lettuce connection. */
final class RedisAdmin implements AutoCloseable {

	private final LettuceConnectionFactory factory;

	private final RedisConnection connection;

	RedisAdmin(String redisUri) {
		URI uri = URI.create(redisUri);
		this.factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(uri.getHost(), (uri.getPort() > 0) ? uri.getPort() : 6379));
		this.factory.afterPropertiesSet();
		this.factory.start();
		this.connection = this.factory.getConnection();
	}

	/**
	 * Run a command.
	 * @param command the command name
	 * @param args its arguments
	 * @return the reply: a Long, a String, a List of those, or {@code null}
	 */
	Object command(String command, String... args) {
		byte[][] raw = new byte[args.length][];
		for (int i = 0; i < args.length; i++) {
			raw[i] = args[i].getBytes(StandardCharsets.UTF_8);
		}
		return decode(this.connection.execute(command, raw));
	}

	/**
	 * Run a command whose reply is an integer (through EVAL: the raw {@code execute} only decodes bulk replies).
	 * @param command the command name
	 * @param args its arguments
	 * @return the integer
	 */
	long longCommand(String command, String... args) {
		byte[][] raw = new byte[args.length + 1][];
		raw[0] = command.getBytes(StandardCharsets.UTF_8);
		for (int i = 0; i < args.length; i++) {
			raw[i + 1] = args[i].getBytes(StandardCharsets.UTF_8);
		}
		Long reply = this.connection.scriptingCommands()
			.eval("return redis.call(unpack(ARGV))".getBytes(StandardCharsets.UTF_8), ReturnType.INTEGER, 0, raw);
		return reply;
	}

	/**
	 * One field of {@code INFO}.
	 * @param section the section, e.g. {@code memory}
	 * @param field the field, e.g. {@code used_memory}
	 * @return its value
	 */
	String info(String section, String field) {
		for (String line : String.valueOf(command("INFO", section)).split("\r?\n")) {
			if (line.startsWith(field + ":")) {
				return line.substring(field.length() + 1).trim();
			}
		}
		throw new IllegalStateException("INFO " + section + " has no " + field);
	}

	/**
	 * Redis' clock ({@code TIME}).
	 * @return Redis' time now, to the microsecond
	 */
	java.time.Instant time() {
		Long micros = this.connection.scriptingCommands()
			.eval("local t = redis.call('TIME') return t[1] * 1000000 + t[2]".getBytes(StandardCharsets.UTF_8),
					ReturnType.INTEGER, 0);
		return java.time.Instant.EPOCH.plus(micros, java.time.temporal.ChronoUnit.MICROS);
	}

	void flushAll() {
		command("FLUSHALL");
	}

	private static Object decode(Object reply) {
		if (reply instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		if (reply instanceof List<?> list) {
			return list.stream().map(RedisAdmin::decode).toList();
		}
		return reply;
	}

	@Override
	public void close() {
		this.connection.close();
		this.factory.destroy();
	}

}
