package io.github.ratelimit.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.benchmarks.Contenders.Scenario;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.redis.LuaScript;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * What the starter really sends to Redis, for the {@code redis-benchmark} ceiling: one check through the starter's
 * store while a {@code MONITOR} connection watches, giving the script's SHA, its keys and its arguments exactly as
 * sent; plus the script's text as the starter joins it from its files on the class path (the starter being
 * measured), for SCRIPT LOAD.
 */
final class ScriptCapture {

	private static final Pattern QUOTED = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

	private ScriptCapture() {
	}

	static void capture(String host, int port, Path out) throws Exception {
		Files.createDirectories(out);
		try (ConfigurableApplicationContext context = BenchContext.start(host, port);
				Socket monitor = new Socket(host, port)) {
			monitor.setSoTimeout(5000);
			OutputStream os = monitor.getOutputStream();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8));
			os.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
			os.flush();
			String ok = in.readLine();
			if (!"+OK".equals(ok)) {
				throw new IllegalStateException("MONITOR answered " + ok);
			}
			Contender store = Contenders.starterStore(context, Scenario.ALLOWED, 1);
			CompletableFuture<Boolean> answer = new CompletableFuture<>();
			store.check(0, new Contender.Sink() {
				@Override
				public void done(boolean allowed, String source) {
					answer.complete(allowed);
				}

				@Override
				public void failed(Throwable error) {
					answer.completeExceptionally(error);
				}
			});
			if (!answer.get(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the first check was denied");
			}
			List<String> command = null;
			try {
				String line;
				while (command == null && (line = in.readLine()) != null) {
					List<String> words = words(line);
					if (!words.isEmpty() && words.get(0).equalsIgnoreCase("EVALSHA")) {
						command = words;
					}
				}
			}
			catch (SocketTimeoutException ex) {
				throw new IllegalStateException("no EVALSHA seen by MONITOR", ex);
			}
			if (command == null) {
				throw new IllegalStateException("no EVALSHA seen by MONITOR");
			}
			int numkeys = Integer.parseInt(command.get(2));
			String id = ApiKeyHasher.hash("bench-allowed-key-0");
			List<String> keys = new ArrayList<>();
			for (String key : command.subList(3, 3 + numkeys)) {
				if (!key.contains(id)) {
					throw new IllegalStateException("the client id is not in the key " + key);
				}
				keys.add(key.replace(id, "__rand_int__"));
			}
			List<String> argv = command.subList(3 + numkeys, command.size());
			String location = LuaScript.RATE_LIMIT_FOLDER;
			Files.writeString(out.resolve("script.lua"), LuaScript.rateLimit().text());
			Properties p = new Properties();
			p.setProperty("location", location);
			p.setProperty("sha", command.get(1));
			p.setProperty("numkeys", String.valueOf(numkeys));
			p.setProperty("keys", String.join(" ", keys));
			p.setProperty("argv", String.join(" ", argv));
			try (var writer = Files.newBufferedWriter(out.resolve("script.properties"))) {
				p.store(writer, "the starter's EVALSHA as seen by MONITOR");
			}
			// for the shell: one value per line
			Files.write(out.resolve("script-command.txt"),
					List.of(command.get(1), String.valueOf(numkeys), String.join(" ", keys), String.join(" ", argv),
							location, String.join(" ", LuaScript.RATE_LIMIT_SOURCES)));
		}
	}

	private static List<String> words(String monitorLine) {
		// 1700000000.123456 [0 127.0.0.1:5555] "EVALSHA" "sha" "1" "key" "arg" ...
		List<String> words = new ArrayList<>();
		int start = monitorLine.indexOf(']');
		Matcher m = QUOTED.matcher(monitorLine);
		if (start < 0 || !m.find(start)) {
			return words;
		}
		do {
			words.add(m.group(1));
		}
		while (m.find());
		return words;
	}

	static List<String> wordsForTest(String line) {
		return words(line);
	}

}
